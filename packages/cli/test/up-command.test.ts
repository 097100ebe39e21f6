import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LmdbEventLog } from '@baton/runtime';
import { extractiveStep, parseWriterPaths, startLoopbackModel, type LoopbackModel, type RecordedRequest } from '@baton/testing';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childEnv, completion, spawnBaton } from './helpers/run-baton.ts';

/** Whether a loopback request is a writer's (its task names the checkpoint path). */
const isWriterRequest = (req: RecordedRequest): boolean => req.body.messages.some((m) => m.role === 'user' && typeof m.content === 'string' && parseWriterPaths(m.content) !== undefined);

const TOOLS = [{ type: 'function' as const, function: { name: 'read_file', parameters: { type: 'object', properties: { path: { type: 'string' } } } } }];

describe('baton up', () => {
  let model: LoopbackModel;
  let dataDir: string;
  beforeAll(async () => {
    model = await startLoopbackModel({ mode: 'scripted' });
    dataDir = await mkdtemp(join(tmpdir(), 'baton-up-'));
  });
  afterAll(async () => {
    await model.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('runs daemon and gateway in one process, prints the base URL, records a conversation and stops on SIGTERM', async () => {
    const child = spawnBaton(['up', '--data-dir', dataDir, '--port', '0', '--log-level', 'warn'], childEnv({ OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'writer-key' }));
    const done = completion(child);
    const baseURL = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout?.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /base URL: (http:\/\/\S+\/v1)/.exec(out);
        if (m?.[1] !== undefined) resolve(m[1]);
      });
      child.once('exit', () => reject(new Error(`baton up exited: ${out}`)));
    });
    const agent = new OpenAI({ baseURL: baseURL.replace(/\/v1$/, '/s/up-test/v1'), apiKey: 'agent-key', maxRetries: 0 });
    model.script({ reply: { content: 'Hello from the model.' } });
    const reply = await agent.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'system', content: 'You are a coding agent.' }, { role: 'user', content: 'hi' }], tools: TOOLS });
    expect(reply.choices[0]?.message.content).toBe('Hello from the model.');
    // The agent's own key went upstream, not the writers' key.
    expect(model.requests.at(-1)?.headers.authorization).toBe('Bearer agent-key');
    child.kill('SIGTERM');
    const run = await done;
    expect(run.code).toBe(0);
    const log = LmdbEventLog.open({ path: join(dataDir, 'events') });
    try {
      const records = [...log.read('session/up-test')].map((r) => r.type);
      expect(records[0]).toBe('session.opened');
      expect(records).toContain('messages.appended');
    } finally {
      await log.close();
    }
  }, 60_000);

  it('sends Anthropic Messages calls to ANTHROPIC_BASE_URL when an Anthropic key is set, the rest to OPENAI_BASE_URL', async () => {
    const anthropic = await startLoopbackModel({ mode: 'scripted' });
    const upDir = await mkdtemp(join(tmpdir(), 'baton-up-anthropic-'));
    const env = { OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'writer-key', ANTHROPIC_BASE_URL: anthropic.url, ANTHROPIC_API_KEY: 'anthropic-writer-key' };
    const child = spawnBaton(['up', '--data-dir', upDir, '--port', '0', '--log-level', 'warn'], childEnv(env));
    const done = completion(child);
    try {
      const baseURL = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout?.on('data', (d: Buffer) => {
          out += d.toString();
          const m = /base URL: (http:\/\/\S+)\/v1/.exec(out);
          if (m?.[1] !== undefined) resolve(m[1]);
        });
        child.once('exit', () => reject(new Error(`baton up exited: ${out}`)));
      });
      const before = model.requests.length;
      anthropic.script({ reply: { content: 'Hello from Anthropic.' } });
      const claude = new Anthropic({ baseURL: `${baseURL}/s/up-anthropic`, apiKey: 'sk-ant-agent', maxRetries: 0 });
      const tools = [{ name: 'read_file', description: 'Read a file', input_schema: { type: 'object' as const, properties: { path: { type: 'string' } } } }];
      const message = await claude.messages.create({ model: 'claude-test', max_tokens: 256, system: 'You are a coding agent.', messages: [{ role: 'user', content: 'hi' }], tools });
      expect(message.content).toEqual([expect.objectContaining({ type: 'text', text: 'Hello from Anthropic.' })]);
      expect(anthropic.requests.map((r) => r.path)).toEqual(['/v1/messages']);
      expect(model.requests.length).toBe(before);
    } finally {
      child.kill('SIGTERM');
      expect((await done).code).toBe(0);
      await anthropic.close();
      await rm(upDir, { recursive: true, force: true });
    }
  }, 60_000);

  it("--writer-key agent: a gateway session's writers call the model with the agent's own key", async () => {
    const upDir = await mkdtemp(join(tmpdir(), 'baton-up-agent-key-'));
    const args = ['up', '--data-dir', upDir, '--port', '0', '--log-level', 'warn', '--writer-key', 'agent', '--context-window', '60000'];
    const child = spawnBaton(args, childEnv({ OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'writer-key' }));
    const done = completion(child);
    model.reset();
    // The agent's model asks for a file to each user message and answers the tool result; writers get the extractive writer.
    model.setResponder((req) => {
      if (isWriterRequest(req)) return extractiveStep(req);
      if (req.body.messages.at(-1)?.role === 'user') return { reply: { tool_calls: [{ name: 'read_file', arguments: { path: 'src/a.ts' } }] } };
      return { reply: { content: 'Read it: the reducer double-counts refunds.' } };
    });
    try {
      let out = '';
      const baseURL = await new Promise<string>((resolve, reject) => {
        child.stdout?.on('data', (d: Buffer) => {
          out += d.toString();
          const m = /base URL: (http:\/\/\S+)\/v1/.exec(out);
          if (m?.[1] !== undefined) resolve(m[1]);
        });
        child.once('exit', () => reject(new Error(`baton up exited: ${out}`)));
      });
      expect(out).toContain("writers use each agent's key");
      const agent = new OpenAI({ baseURL: `${baseURL}/s/agent-key-session/v1`, apiKey: 'agent-own-key', maxRetries: 0 });
      const history: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: 'system', content: 'You are a coding agent.' }];
      // Turns with large tool results until the session crosses a threshold and a writer calls the model.
      for (let turn = 0; turn < 40 && !model.requests.some(isWriterRequest); turn++) {
        history.push({ role: 'user', content: `Look at module ${turn}.` });
        const call = (await agent.chat.completions.create({ model: 'gpt-4o', messages: history, tools: TOOLS })).choices[0]?.message;
        const toolCall = call?.tool_calls?.[0];
        if (call === undefined || toolCall === undefined) throw new Error('the agent model asked for no file');
        history.push(call, { role: 'tool', tool_call_id: toolCall.id, content: Array.from({ length: 130 }, (_, j) => `export const v${turn}_${j} = step(${turn * 1000 + j});`).join('\n') });
        const answer = (await agent.chat.completions.create({ model: 'gpt-4o', messages: history, tools: TOOLS })).choices[0]?.message;
        if (answer !== undefined) history.push(answer);
      }
      const writers = model.requests.filter(isWriterRequest);
      expect(writers.length).toBeGreaterThan(0);
      expect(writers.map((r) => r.headers.authorization)).toEqual(writers.map(() => 'Bearer agent-own-key'));
    } finally {
      child.kill('SIGTERM');
      expect((await done).code).toBe(0);
      model.reset();
      await rm(upDir, { recursive: true, force: true });
    }
  }, 120_000);

  it('refuses to start without a model endpoint for the writers, naming the variable', async () => {
    const run = await completion(spawnBaton(['up', '--data-dir', dataDir, '--port', '0'], childEnv()));
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/OPENAI_BASE_URL/);
  });
});
