import Anthropic from '@anthropic-ai/sdk';
import type { TextBlockParam } from '@anthropic-ai/sdk/resources/messages';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startLoopbackModel, type LoopbackModel } from '../../src/index.ts';
import { anthropicFrom, anthropicToolsFrom, responsesFrom, responsesToolsFrom } from './api-conversation.ts';
import { runAnthropicWriterLoop, runResponsesWriterLoop } from './api-writer-loops.ts';
import { agentTools, batonTools, conversation, LATEST_REQUEST, NOTES_TEMPLATE, TEST_TEMPLATE, writerTask } from './conversation-fixture.ts';
import type { LoopToolNames } from './writer-loop.ts';

let dir: string;
let server: LoopbackModel;

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
  dir = await mkdtemp(join(tmpdir(), 'baton-loopback-apis-'));
  await mkdir(join(dir, 'sessions/s1'), { recursive: true });
  await writeFile(checkpointPath(), TEST_TEMPLATE);
  await writeFile(notesPath(), `${NOTES_TEMPLATE}\n## [turn 7 · 2025-01-01T10:00Z]\nRemember the flaky CI job on Node 20.\n`);
  server = await startLoopbackModel({ mode: 'extractive' });
});

afterEach(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

function section(text: string, n: number): string {
  const start = text.indexOf(`## §${n} `);
  const end = n === 11 ? text.length : text.indexOf(`## §${n + 1} `);
  return text.slice(start, end);
}

function headersAndInstructions(text: string): string[] {
  return text.split('\n').filter((l) => l.startsWith('#') || /^_.*_$/.test(l));
}

/** What every faithful checkpoint of the fixture conversation says, whatever the API it came through. */
async function expectFaithfulCheckpoint(): Promise<void> {
  const checkpoint = await readFile(checkpointPath(), 'utf8');
  expect(headersAndInstructions(checkpoint)).toEqual(headersAndInstructions(TEST_TEMPLATE));
  for (const line of LATEST_REQUEST.split('\n')) expect(section(checkpoint, 1)).toContain(`> ${line}`);
  expect(section(checkpoint, 4)).toContain('- 🔄 T1 Fix the login token refresh (focus)');
  expect(section(checkpoint, 6)).toContain('`src/auth/login.ts` — read_file, edit_file');
  expect(section(checkpoint, 8)).toContain("`bash`: TypeError: Cannot read properties of undefined (reading 'token')");
  expect(section(checkpoint, 9)).toContain('branch: fix/login-refresh');
  expect(section(checkpoint, 10)).toContain('refresh in the middleware instead of the client');
  expect(section(checkpoint, 11)).toContain('Remember the flaky CI job on Node 20.');
  expect(await readFile(notesPath(), 'utf8')).toBe(NOTES_TEMPLATE);
}

describe('extractive writer over the Responses API', () => {
  it('fork mode: reads, writes with the agent tools as function calls, then completes', async () => {
    const client = new OpenAI({ baseURL: server.baseURL, apiKey: 'test', maxRetries: 0 });
    const { instructions, input } = responsesFrom([...conversation(longSystem), writerTask(dir)]);
    const turns = await runResponsesWriterLoop(client, instructions, input, responsesToolsFrom(agentTools), agentNames);

    expect(turns.map((t) => t.calls.map((c) => [c.name, c.args['file_path']]))).toEqual([
      [
        ['read_file', checkpointPath()],
        ['read_file', join(dir, 'projects/p1/MEMORY.md')],
        ['read_file', notesPath()],
      ],
      [
        ['write_file', checkpointPath()],
        ['write_file', notesPath()],
      ],
      [],
    ]);
    expect(turns[2]).toMatchObject({ content: 'CHECKPOINT_COMPLETE', finishReason: 'completed' });
    await expectFaithfulCheckpoint();
    // Every writer turn extends the same input: the simulated prefix cache credits it.
    expect(server.requests.map((r) => r.api)).toEqual(['openai-responses', 'openai-responses', 'openai-responses']);
    expect(server.stats().cachedTokens).toBeGreaterThan(2 * 1024);
  });

  it("delta mode with Baton's tools: a validation reflection gets one shorter rewrite", async () => {
    const client = new OpenAI({ baseURL: server.baseURL, apiKey: 'test', maxRetries: 0 });
    const { instructions, input } = responsesFrom([...conversation('You are a coding agent.'), writerTask(dir)]);
    const tools = responsesToolsFrom(batonTools);
    await runResponsesWriterLoop(client, instructions, input, tools, batonNames);
    const full = await readFile(checkpointPath(), 'utf8');
    input.push({ role: 'user', content: 'Checkpoint validation failed: §8 is over its budget. Fix the issues and write the file again.' });
    const second = await runResponsesWriterLoop(client, instructions, input, tools, batonNames);
    expect(second.map((t) => t.calls.map((c) => c.args['path']))).toEqual([[checkpointPath()], []]);
    expect(second[1]?.content).toBe('CHECKPOINT_COMPLETE');
    expect((await readFile(checkpointPath(), 'utf8')).length).toBeLessThan(full.length);
  });
});

describe('extractive writer over the Anthropic Messages API', () => {
  it('fork mode: the task shares a user message with the last tool result; tool_use blocks write the checkpoint', async () => {
    const client = new Anthropic({ baseURL: server.url, apiKey: 'test', maxRetries: 0 });
    const taskText = writerTask(dir).content as string;
    const { system, messages } = anthropicFrom(conversation(longSystem));
    // The agent's last turn called a tool: Anthropic needs its result first in the next user message, next to the task.
    messages.push(
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_last', name: 'read_file', input: { file_path: 'docs/auth.md' } }] },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_last', content: '# Auth\nerror: refresh flow undocumented' },
          { type: 'text', text: taskText, cache_control: { type: 'ephemeral' } },
        ],
      },
    );
    const systemBlocks: TextBlockParam[] = [{ type: 'text', text: system, cache_control: { type: 'ephemeral' } }];
    const turns = await runAnthropicWriterLoop(client, systemBlocks, messages, anthropicToolsFrom(agentTools), agentNames);

    expect(turns.map((t) => t.calls.map((c) => c.name))).toEqual([['read_file', 'read_file', 'read_file'], ['write_file', 'write_file'], []]);
    expect(turns.map((t) => t.finishReason)).toEqual(['tool_use', 'tool_use', 'end_turn']);
    expect(turns[2]?.content).toBe('CHECKPOINT_COMPLETE');
    await expectFaithfulCheckpoint();
    const checkpoint = await readFile(checkpointPath(), 'utf8');
    // The result carried by the task message belongs to the conversation, not to the writer's reads.
    expect(section(checkpoint, 5)).toContain('`read_file` (file_path: docs/auth.md)');
    expect(section(checkpoint, 8)).toContain('`read_file`: error: refresh flow undocumented');
    expect(server.requests.every((r) => r.api === 'anthropic-messages')).toBe(true);
    // Later writer turns read the system and task breakpoints the first one wrote.
    expect(server.stats().cachedTokens).toBeGreaterThan(2 * 1024);
  });

  it("fork mode: the task shares a user message with the user's own prompt (Claude Code's first turn); the prompt is the active intent", async () => {
    const client = new Anthropic({ baseURL: server.url, apiKey: 'test', maxRetries: 0 });
    const taskText = writerTask(dir).content as string;
    // The fork's prefix ends on the user's prompt (the agent's answer to it is after the boundary): the task is one
    // more text block of that message, after the agent's own reminder block and the prompt.
    const { system, messages } = anthropicFrom(conversation(longSystem).slice(0, -1));
    const prompt = messages.pop();
    if (prompt?.role !== 'user' || !Array.isArray(prompt.content)) throw new Error('the fixture ends with a user prompt');
    messages.push({ role: 'user', content: [{ type: 'text', text: '<system-reminder>\nToday is a weekday.\n</system-reminder>\n' }, ...prompt.content, { type: 'text', text: taskText, cache_control: { type: 'ephemeral' } }] });
    const turns = await runAnthropicWriterLoop(client, [{ type: 'text', text: system }], messages, anthropicToolsFrom(agentTools), agentNames);

    expect(turns.map((t) => t.calls.map((c) => c.name))).toEqual([['read_file', 'read_file', 'read_file'], ['write_file', 'write_file'], []]);
    await expectFaithfulCheckpoint();
    const intent = section(await readFile(checkpointPath(), 'utf8'), 1);
    expect(intent).toContain('> Should we also bump the package version?');
    expect(intent).not.toContain('weekday');
    expect(intent).not.toContain('CHECKPOINT_PATH');
  });

  it('without a writer task, answers with an extractive summary as a text block', async () => {
    const client = new Anthropic({ baseURL: server.url, apiKey: 'test', maxRetries: 0 });
    const history: ChatCompletionMessageParam[] = [...conversation('sys'), { role: 'user', content: 'Summarize the conversation.' }];
    const { system, messages } = anthropicFrom(history);
    const res = await client.messages.create({ model: 'm', max_tokens: 8000, system, messages });
    const text = res.content[0]?.type === 'text' ? res.content[0].text : '';
    expect(res.stop_reason).toBe('end_turn');
    expect(text).toContain('## §1 Active intent');
    expect(text).toContain('> Great, that works.');
    expect(text).toContain('`src/auth/login.ts`');
  });
});
