import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { startLoopbackModel, type LoopbackModel } from '../../src/index.ts';

/*
 * The requests real agents sent (Codex CLI and pi over Responses, pi over Anthropic Messages; see
 * test/fixtures/agents/README.md), replayed to the loopback in order: every one is accepted, read through the neutral
 * view, and a growing conversation gets cache hits.
 */

const FIXTURES = fileURLToPath(new URL('../../../../test/fixtures/agents/', import.meta.url));

interface Capture {
  readonly requests: readonly { readonly path: string; readonly body: Record<string, unknown> }[];
}

const captures = readdirSync(FIXTURES)
  .filter((name) => name.endsWith('.json'))
  .map((name) => [name, JSON.parse(readFileSync(`${FIXTURES}${name}`, 'utf8')) as Capture] as const);

let server: LoopbackModel | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Cache hit of a reply body in either API. */
function cacheHit(reply: Record<string, unknown>): number {
  const usage = reply['usage'] as Record<string, unknown> | undefined;
  const details = usage?.['input_tokens_details'] as Record<string, unknown> | undefined;
  return Number(details?.['cached_tokens'] ?? usage?.['cache_read_input_tokens'] ?? 0);
}

describe('captured agent requests', () => {
  it('finds the captures', () => {
    expect(captures.length).toBeGreaterThanOrEqual(10);
  });

  it.each(captures)('%s: accepted, read, and cached as the conversation grows', async (_name, capture) => {
    const model = await startLoopbackModel({ mode: 'scripted' });
    server = model;
    model.setResponder(() => ({ reply: { content: 'ok' } }));
    const hits: number[] = [];
    for (const request of capture.requests) {
      // The captures went through a session prefix (`/s/<session>/v1/…`); the loopback serves `/v1/…`.
      const path = request.path.slice(request.path.indexOf('/v1/'));
      // Non-streamed, so the reply is one JSON body to read usage from.
      const body = JSON.stringify({ ...request.body, stream: false });
      const res = await fetch(`${model.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      expect(res.status).toBe(200);
      hits.push(cacheHit((await res.json()) as Record<string, unknown>));
    }
    expect(hits[0]).toBe(0);
    expect(hits.slice(1).some((h) => h > 0)).toBe(true);
    for (const [i, recorded] of model.requests.entries()) {
      const wire = capture.requests[i]?.body;
      const list = (wire?.['input'] ?? wire?.['messages']) as unknown[];
      expect(recorded.conversation.items).toHaveLength(list.length);
      expect(recorded.conversation.system.length).toBeGreaterThan(1000);
      // Function tools (Responses) and client tools (Anthropic) are read; Codex's custom, search and namespace tools not.
      const tools = (wire?.['tools'] ?? []) as Record<string, unknown>[];
      const functionTools = tools.filter((t) => t['type'] === 'function' || t['input_schema'] !== undefined);
      expect(recorded.conversation.tools.map((t) => t.name)).toEqual(functionTools.map((t) => t['name']));
      // Every tool result answers a call the conversation made.
      const calls = new Set(recorded.conversation.items.flatMap((item) => item.toolCalls.map((c) => c.id)));
      for (const item of recorded.conversation.items) for (const result of item.toolResults) expect(calls.has(result.callId)).toBe(true);
    }
  });
});
