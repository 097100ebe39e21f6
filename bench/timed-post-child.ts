/**
 * A client in its own process for the `instant-compaction` section, so its timings share no event loop with the
 * gateway (this section's parent) or the loopback (its own child): `{ type: 'post', url, headers, body }` sends one
 * POST over `fetch`, reads the whole answer and answers `post { ttfb, total, status, text }` (ms, from the client's
 * side); a failed call answers `error`.
 */
import { runChild, sendToParent, type ChildMessage } from './bench-process.ts';
import { timedChatCall } from './timed-chat-call.ts';

async function main(): Promise<void> {
  process.on('message', (m: ChildMessage) => {
    if (m.type === 'stop') process.exit(0);
    if (m.type !== 'post') return;
    timedChatCall(String(m['url']), String(m['body']), m['headers'] as Record<string, string>)
      .then((call) => sendToParent({ type: 'post', ttfb: call.ttfb, total: call.total, status: call.status, text: call.text }))
      .catch((err: unknown) => sendToParent({ type: 'error', message: err instanceof Error ? err.message : String(err) }));
  });
  await sendToParent({ type: 'ready' });
  // Runs until the parent disconnects (runChild exits then).
  await new Promise<never>(() => {});
}

runChild(main);
