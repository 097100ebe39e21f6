import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLoopbackModel, type LoopbackModel } from '@baton/testing';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childEnv, completion, spawnBaton } from './helpers/run-baton.ts';

const TOOLS = [{ type: 'function' as const, function: { name: 'read_file', parameters: { type: 'object', properties: { path: { type: 'string' } } } } }];

interface SessionRow {
  readonly session_id: string;
  readonly state: { readonly tokens: number } | null;
}

/** Asks `probe` again every 25 ms until it answers (at most 20 s). */
async function until<T>(probe: () => T | null | Promise<T | null>): Promise<T> {
  for (let i = 0; i < 800; i++) {
    const found = await probe();
    if (found !== null) return found;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('the awaited state never came');
}

describe('baton up --inspect', () => {
  let model: LoopbackModel;
  let dataDir: string;
  beforeAll(async () => {
    model = await startLoopbackModel({ mode: 'scripted' });
    dataDir = await mkdtemp(join(tmpdir(), 'baton-up-inspect-'));
  });
  afterAll(async () => {
    await model.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("serves the inspector over the daemon's own log, following the conversations the gateway records", async () => {
    const child = spawnBaton(['up', '--data-dir', dataDir, '--port', '0', '--inspect', '127.0.0.1:0', '--log-level', 'warn'], childEnv({ OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'writer-key' }));
    let out = '';
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    const done = completion(child);
    const [baseURL, inspector] = await until(() => {
      const base = /base URL: (http:\/\/\S+\/v1)/.exec(out)?.[1];
      const page = /^inspector: (http:\/\/127\.0\.0\.1:\d+\/)/m.exec(out)?.[1];
      return base !== undefined && page !== undefined ? [base, page] : null;
    });
    const sessions = async (): Promise<SessionRow[]> => ((await (await fetch(new URL('api/sessions', inspector))).json()) as { sessions: SessionRow[] }).sessions;
    expect(await sessions()).toEqual([]);

    const agent = new OpenAI({ baseURL: baseURL.replace(/\/v1$/, '/s/up-inspect/v1'), apiKey: 'agent-key', maxRetries: 0 });
    model.script({ reply: { content: 'Hello from the model.' } });
    await agent.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'system', content: 'You are a coding agent.' }, { role: 'user', content: 'hi' }], tools: TOOLS });
    // The gateway records a call once its reply is complete, in the background: the page sees it when it lands.
    const [row] = await until(async () => {
      const rows = await sessions();
      return rows.length > 0 ? rows : null;
    });
    expect(row?.session_id).toBe('up-inspect');
    const revisionOf = async (): Promise<number> => ((await (await fetch(new URL('api/sessions/up-inspect/revision', inspector))).json()) as { revision: number }).revision;
    const before = await revisionOf();
    const page = await fetch(new URL('s/up-inspect', inspector));
    expect(page.headers.get('content-type')).toContain('text/html');

    model.script({ reply: { content: 'Done.' } });
    await agent.chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'system', content: 'You are a coding agent.' }, { role: 'user', content: 'hi' }, { role: 'assistant', content: 'Hello from the model.' }, { role: 'user', content: 'and now?' }],
      tools: TOOLS,
    });
    expect(await until(async () => ((await revisionOf()) > before ? true : null))).toBe(true);

    child.kill('SIGTERM');
    expect((await done).code).toBe(0);
  }, 60_000);

  it('refuses an inspector address that is not host:port', async () => {
    const run = await completion(spawnBaton(['up', '--data-dir', dataDir, '--inspect', 'nowhere'], childEnv({ OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'k' })));
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('--inspect');
  }, 60_000);
});
