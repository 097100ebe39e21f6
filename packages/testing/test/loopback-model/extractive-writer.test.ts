import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startLoopbackModel, type LoopbackModel } from '../../src/index.ts';
import {
  agentTools,
  batonTools,
  conversation,
  LATEST_REQUEST,
  NOTES_TEMPLATE,
  TEST_TEMPLATE,
  writerTask,
} from './conversation-fixture.ts';
import { runWriterLoop, type LoopToolNames } from './writer-loop.ts';

let dir: string;
let server: LoopbackModel;
let client: OpenAI;

const checkpointPath = (): string => join(dir, 'sessions/s1/checkpoint.md');
const notesPath = (): string => join(dir, 'sessions/s1/notes.md');
const longSystem = Array.from({ length: 300 }, (_, i) => `Agent rule ${i}: prefer small, reviewed changes.`).join('\n');

const agentNames: LoopToolNames = {
  read: { name: 'read_file', pathArg: 'file_path' },
  write: { name: 'write_file', pathArg: 'file_path', contentArg: 'text' },
  numberLines: true,
};
const batonNames: LoopToolNames = { read: { name: 'read', pathArg: 'path' }, write: { name: 'write', pathArg: 'path', contentArg: 'content' } };

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'baton-loopback-'));
  await mkdir(join(dir, 'sessions/s1'), { recursive: true });
  await writeFile(checkpointPath(), TEST_TEMPLATE);
  await writeFile(notesPath(), `${NOTES_TEMPLATE}\n## [turn 7 · 2025-01-01T10:00Z]\nRemember the flaky CI job on Node 20.\n`);
  server = await startLoopbackModel({ mode: 'extractive' });
  client = new OpenAI({ baseURL: server.baseURL, apiKey: 'test', maxRetries: 0 });
});

afterEach(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

/** Body lines of section N of a checkpoint (between its instruction line and the next header). */
function section(text: string, n: number): string {
  const start = text.indexOf(`## §${n} `);
  const end = n === 11 ? text.length : text.indexOf(`## §${n + 1} `);
  return text.slice(start, end);
}

function headersAndInstructions(text: string): string[] {
  return text.split('\n').filter((l) => l.startsWith('#') || /^_.*_$/.test(l));
}

describe('extractive mode: a fake checkpoint writer', () => {
  it('fork mode: reads, writes a faithful 11-section checkpoint with the agent tools, then completes', async () => {
    const messages: ChatCompletionMessageParam[] = [...conversation(longSystem), writerTask(dir)];
    const turns = await runWriterLoop(client, messages, agentTools, agentNames);

    expect(turns).toHaveLength(3);
    expect(turns[0]?.calls.map((c) => [c.name, c.args])).toEqual([
      ['read_file', { file_path: checkpointPath() }],
      ['read_file', { file_path: join(dir, 'projects/p1/MEMORY.md') }],
      ['read_file', { file_path: notesPath() }],
    ]);
    expect(turns[1]?.calls.map((c) => [c.name, c.args['file_path']])).toEqual([
      ['write_file', checkpointPath()],
      ['write_file', notesPath()],
    ]);
    expect(turns[2]).toEqual({ calls: [], content: 'CHECKPOINT_COMPLETE', finishReason: 'stop' });

    const checkpoint = await readFile(checkpointPath(), 'utf8');
    // Same structure as the template it read: title, italic lines and the 11 headers, in order.
    expect(headersAndInstructions(checkpoint)).toEqual(headersAndInstructions(TEST_TEMPLATE));
    for (const line of LATEST_REQUEST.split('\n')) expect(section(checkpoint, 1)).toContain(`> ${line}`);
    expect(section(checkpoint, 2)).toContain('I will update docs/auth.md next');
    expect(section(checkpoint, 4)).toContain('- 🔄 T1 Fix the login token refresh (focus)');
    expect(section(checkpoint, 4)).toContain('  - ✅ T1.1 Reproduce the failure');
    expect(section(checkpoint, 5)).toContain('`bash` (command: git checkout -b fix/login-refresh');
    expect(section(checkpoint, 6)).toContain('`src/auth/login.ts` — read_file, edit_file');
    expect(section(checkpoint, 7)).toContain('because the middleware runs late');
    expect(section(checkpoint, 8)).toContain("TypeError: Cannot read properties of undefined (reading 'token')");
    expect(section(checkpoint, 9)).toContain('branch: fix/login-refresh');
    expect(section(checkpoint, 9)).toContain('port: 4100');
    expect(section(checkpoint, 10)).toContain('refresh in the middleware instead of the client');
    expect(section(checkpoint, 11)).toContain('Should we also bump the package version?');
    expect(section(checkpoint, 11)).toContain('Remember the flaky CI job on Node 20.');
    expect(section(checkpoint, 3)).toContain('- "Always run the tests before you commit."');
    // notes.md reset to its template part.
    expect(await readFile(notesPath(), 'utf8')).toBe(NOTES_TEMPLATE);
    // The writer's turns share the fork prefix: the provider cache simulation credits it.
    expect(server.requests).toHaveLength(3);
    expect(server.stats().cachedTokens).toBeGreaterThan(2 * 1024);
  });

  it('delta mode with Baton tools; a validation reflection gets one shorter rewrite, then completion', async () => {
    const messages: ChatCompletionMessageParam[] = [...conversation('You are a coding agent.').slice(1), writerTask(dir, true)];
    const first = await runWriterLoop(client, messages, batonTools, batonNames);
    expect(first.map((t) => t.calls.map((c) => c.name))).toEqual([['read', 'read', 'read'], ['write', 'write'], []]);
    const full = await readFile(checkpointPath(), 'utf8');

    messages.push({ role: 'user', content: 'Checkpoint validation failed: §8 is over its budget. Fix the issues and write the file again.' });
    const second = await runWriterLoop(client, messages, batonTools, batonNames);
    expect(second.map((t) => t.calls.map((c) => c.args['path']))).toEqual([[checkpointPath()], []]);
    expect(second[1]?.content).toBe('CHECKPOINT_COMPLETE');
    const short = await readFile(checkpointPath(), 'utf8');
    expect(headersAndInstructions(short)).toEqual(headersAndInstructions(TEST_TEMPLATE));
    expect(short.length).toBeLessThan(full.length);
    expect(section(short, 1)).toContain('> Great, that works.');
  });

  it('falls back to default headers when the checkpoint file is missing', async () => {
    await rm(checkpointPath());
    const messages: ChatCompletionMessageParam[] = [...conversation('sys'), writerTask(dir)];
    await runWriterLoop(client, messages, batonTools, batonNames);
    const checkpoint = await readFile(checkpointPath(), 'utf8');
    const headers = checkpoint.split('\n').filter((l) => l.startsWith('## §'));
    expect(headers.map((h) => h.split(' ')[1])).toEqual(Array.from({ length: 11 }, (_, i) => `§${i + 1}`));
    expect(checkpoint.startsWith('# Session checkpoint\n')).toBe(true);
  });

  it('explains itself when no usable write tool is offered', async () => {
    const messages: ChatCompletionMessageParam[] = [...conversation('sys'), writerTask(dir)];
    const tools = agentTools.filter((t) => t.type === 'function' && t.function.name !== 'write_file');
    const turns = await runWriterLoop(client, messages, tools, agentNames);
    expect(turns).toHaveLength(1);
    expect(turns[0]?.finishReason).toBe('stop');
    expect(turns[0]?.content).toContain('no tool that writes');
  });

  it('answers a request without a writer task with an extractive summary', async () => {
    const messages: ChatCompletionMessageParam[] = [...conversation('sys'), { role: 'user', content: 'Summarize the conversation.' }];
    const res = await client.chat.completions.create({ model: 'm', messages });
    const text = res.choices[0]?.message.content ?? '';
    expect(res.choices[0]?.finish_reason).toBe('stop');
    expect(text).toContain('## §1 Active intent');
    expect(text).toContain('> Great, that works.');
    expect(text).toContain('`src/auth/login.ts`');
  });

  it('scripted steps still take precedence in extractive mode', async () => {
    server.script({ error: { status: 429, message: 'busy' } });
    const messages: ChatCompletionMessageParam[] = [...conversation('sys'), writerTask(dir)];
    await expect(client.chat.completions.create({ model: 'm', messages, tools: batonTools })).rejects.toThrow('busy');
    const turns = await runWriterLoop(client, messages, batonTools, batonNames);
    expect(turns.at(-1)?.content).toBe('CHECKPOINT_COMPLETE');
  });
});
