import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startInspector } from '@baton/inspector';
import { startLoopbackModel } from '@baton/testing';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordSession } from './helpers/record-session.ts';
import { childEnv, completion, runBaton, spawnBaton, waitForLine } from './helpers/run-baton.ts';

const TOOLS = [{ type: 'function' as const, function: { name: 'read_file', parameters: { type: 'object', properties: { path: { type: 'string' } } } } }];

/** Asks `probe` again every 25 ms until it answers (at most 20 s). */
async function until<T>(probe: () => Promise<T | null>): Promise<T> {
  for (let i = 0; i < 800; i++) {
    const found = await probe();
    if (found !== null) return found;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('the awaited state never came');
}

describe('baton inspect', () => {
  let dataDir: string;
  let sessionId: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'baton-inspect-'));
    ({ sessionId } = await recordSession(dataDir));
  }, 60_000);
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('serves the inspector on loopback, prints its URL, answers for the recorded session and stops on SIGTERM', async () => {
    const child = spawnBaton(['inspect', '--data-dir', dataDir, '--port', '0']);
    const done = completion(child);
    const line = await waitForLine(child, /^baton inspect: http:\/\//);
    const url = /(http:\/\/127\.0\.0\.1:\d+\/)/.exec(line)?.[1];
    expect(url).toBeDefined();
    const sessions = (await (await fetch(new URL('api/sessions', url))).json()) as { sessions: { session_id: string }[] };
    expect(sessions.sessions.map((s) => s.session_id)).toEqual([sessionId]);
    const page = await fetch(new URL(`s/${sessionId}`, url));
    expect(page.headers.get('content-type')).toContain('text/html');
    child.kill('SIGTERM');
    const run = await done;
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
  }, 60_000);

  it('reads, from another process, a log a running daemon keeps appending to', async () => {
    const liveDir = await mkdtemp(join(tmpdir(), 'baton-inspect-live-'));
    const model = await startLoopbackModel({ mode: 'scripted' });
    const child = spawnBaton(['up', '--data-dir', liveDir, '--port', '0', '--log-level', 'warn'], childEnv({ OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'writer-key' }));
    const done = completion(child);
    try {
      const baseURL = /(http:\/\/\S+\/v1)/.exec(await waitForLine(child, /base URL: http:\/\//))?.[1] as string;
      // The daemon is another process; this one opens the same LMDB environment read-only.
      const inspector = await startInspector({ dataDir: liveDir });
      try {
        const get = async <T>(path: string): Promise<T> => (await (await fetch(new URL(path, inspector.url))).json()) as T;
        expect((await get<{ sessions: unknown[] }>('api/sessions')).sessions).toEqual([]);
        const agent = new OpenAI({ baseURL: baseURL.replace(/\/v1$/, '/s/live-inspect/v1'), apiKey: 'agent-key', maxRetries: 0 });
        const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'system', content: 'You are a coding agent.' }, { role: 'user', content: 'hi' }];
        model.script({ reply: { content: 'Hello.' } });
        await agent.chat.completions.create({ model: 'gpt-4o', messages, tools: TOOLS });
        const first = await until(async () => {
          const reply = await get<{ revision?: number }>('api/sessions/live-inspect/revision');
          return reply.revision !== undefined ? reply.revision : null;
        });
        model.script({ reply: { content: 'Done.' } });
        await agent.chat.completions.create({ model: 'gpt-4o', messages: [...messages, { role: 'assistant', content: 'Hello.' }, { role: 'user', content: 'more' }], tools: TOOLS });
        const later = await until(async () => {
          const { revision } = await get<{ revision: number }>('api/sessions/live-inspect/revision');
          return revision > first ? revision : null;
        });
        expect(later).toBeGreaterThan(first);
        const view = await get<{ session: { sessionId: string; records: number } }>('api/sessions/live-inspect');
        expect(view.session).toMatchObject({ sessionId: 'live-inspect' });
      } finally {
        await inspector.close();
      }
    } finally {
      child.kill('SIGTERM');
      await done;
      await model.close();
      await rm(liveDir, { recursive: true, force: true });
    }
  }, 60_000);

  it('exits 2 naming the directory when it holds no event log', async () => {
    const missing = join(dataDir, 'nothing-here');
    const run = await runBaton(['inspect', '--data-dir', missing, '--port', '0']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`no event log at ${join(missing, 'events')}`);
  }, 60_000);
});
