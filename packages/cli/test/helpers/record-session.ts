import { join } from 'node:path';
import { BatonClient, MemoryTransport } from '@baton/client';
import { BatonDaemon, LmdbEventLog } from '@baton/runtime';
import { type Message } from '@baton/protocol';
import { startLoopbackModel } from '@baton/testing';

const PARAGRAPH =
  'The payment service retries failed charges with exponential backoff; we decided to cap retries at five and to log every retry with the order id. ';

/** Six user/assistant turns whose provider usage climbs past the 1 000 and 2 000 token rungs. */
export function shortConversation(): Message[][] {
  const turns: Message[][] = [];
  let n = 0;
  for (let i = 0; i < 6; i++) {
    turns.push([
      { id: `m${++n}`, role: 'user', content: `Step ${i}: ${PARAGRAPH.repeat(3)}` },
      {
        id: `m${++n}`,
        role: 'assistant',
        content: `Done with step ${i}. ${PARAGRAPH}`,
        finish_reason: 'stop',
        usage: { prompt_tokens: 400 * (i + 1), completion_tokens: 50, total_tokens: 400 * (i + 1) + 50 },
      },
    ]);
  }
  return turns;
}

/**
 * Runs a real daemon (MemoryTransport, LmdbEventLog in `<dataDir>/events`, the extractive loopback model, one worker)
 * through a short conversation that crosses a threshold, waits until its writer settled, and closes everything.
 * Returns the session id; the log stays in `dataDir`.
 */
export async function recordSession(dataDir: string): Promise<{ sessionId: string; settledOutcome: string }> {
  const model = await startLoopbackModel({ mode: 'extractive' });
  const transport = new MemoryTransport();
  const log = LmdbEventLog.open({ path: join(dataDir, 'events') });
  const daemon = BatonDaemon.start({
    transport,
    log,
    dataDir,
    poolSize: 1,
    model: { baseURL: model.baseURL, apiKey: 'test' },
    tail: { minTokens: 50, maxTokens: 400, minTextMessages: 1 },
  });
  try {
    const client = new BatonClient(transport);
    const opened = await client.open({
      project_id: 'replay-test',
      model: { id: 'gpt-4o', context_window: 100_000 },
      system: 'You are a careful coding agent.',
      checkpoint: { thresholds: [1000, 2000] },
    });
    const sessionId = opened.session_id;
    const settled = client.waitForEvent(sessionId, (e) => e.type === 'writer.settled', 30_000);
    for (const turn of shortConversation()) await client.append(sessionId, turn);
    const event = await settled;
    // Let the session fold the settlement and record its decision before stopping.
    for (let i = 0; i < 200 && (await client.status(sessionId)).state.writer !== 'idle'; i++) await new Promise((r) => setTimeout(r, 20));
    return { sessionId, settledOutcome: event.type === 'writer.settled' ? event.outcome : 'unknown' };
  } finally {
    await daemon.stop();
    await log.close();
    await transport.close();
    await model.close();
  }
}

/**
 * Copies every stream of the log in `from` into a fresh log in `to`, passing each record through `edit` (return null
 * to drop it). Records keep their `at` and `msgId`; sequence numbers are reassigned in order.
 */
export async function copyLog(
  from: string,
  to: string,
  edit: (stream: string, record: { seq: number; type: string; at: number; payload: unknown; msgId?: string }) => { type: string; at: number; payload: unknown; msgId?: string } | null,
): Promise<void> {
  const source = LmdbEventLog.open({ path: join(from, 'events') });
  const target = LmdbEventLog.open({ path: join(to, 'events') });
  try {
    for (const stream of [...source.streams()]) {
      const records = [];
      for (const r of source.read(stream)) {
        const edited = edit(stream, r);
        if (edited !== null) records.push(edited);
      }
      await target.append(stream, records);
    }
  } finally {
    await source.close();
    await target.close();
  }
}
