import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  bootstrapMemory,
  checkCheckpointStructure,
  loadPrompt,
  memoryPaths,
  parseSections,
  renderPrompt,
  type MemoryPaths,
} from '@baton/memory-store';
import OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startLoopbackModel, type LoopbackModel } from '../../src/index.ts';
import { batonTools, conversation } from './conversation-fixture.ts';
import { runWriterLoop, type LoopToolNames } from './writer-loop.ts';

// The extractive writer against Baton's real prompt texts and checkpoint template (prompts/ via @baton/memory-store):
// what the runtime's writer will actually send and validate.

const names: LoopToolNames = { read: { name: 'read', pathArg: 'path' }, write: { name: 'write', pathArg: 'path', contentArg: 'content' } };
let root: string;
let paths: MemoryPaths;
let server: LoopbackModel;
let client: OpenAI;

function task(): ChatCompletionMessageParam {
  const content = renderPrompt('writer-task', {
    TOOLS: 'read, write, edit',
    CHECKPOINT_PATH: paths.checkpoint,
    MEMORY_PATH: paths.memory,
    TASK_MEM_DIR: paths.tasksDir,
    NOTES_PATH: paths.notes,
    SUBAGENT_PROGRESS: '',
    NOTES_TEMPLATE: loadPrompt('notes-template'),
    SECTION_BUDGETS: 'Section budgets (~tokens):\n   §1: 400    §2: 700    §3: 600',
    TASK_TREE: '- 🔄 T1: Fix the login token refresh (focus)\n  - ✅ T2: Reproduce the failure',
    RANGE: 'This checkpoint covers the conversation up to message m12.',
  });
  return { role: 'user', content };
}

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'baton-loopback-prompts-'));
  paths = memoryPaths(root, { projectId: 'p1', sessionId: 's1' });
  await bootstrapMemory(paths);
  server = await startLoopbackModel({ mode: 'extractive' });
  client = new OpenAI({ baseURL: server.baseURL, apiKey: 'test', maxRetries: 0 });
});

afterEach(async () => {
  await server.close();
  await rm(root, { recursive: true, force: true });
});

describe('extractive writer with Baton prompts', () => {
  it('writes a checkpoint that passes the memory-store structure check', async () => {
    await writeFile(paths.notes, `${loadPrompt('notes-template')}\n## [turn 3 · 2025-01-01T10:00Z]\nCI is flaky on Node 20.\n`);
    const messages: ChatCompletionMessageParam[] = [...conversation('You are a coding agent.'), task()];
    const turns = await runWriterLoop(client, messages, batonTools, names);
    expect(turns.map((t) => t.calls.length)).toEqual([3, 2, 0]);

    const checkpoint = await readFile(paths.checkpoint, 'utf8');
    expect(checkCheckpointStructure(checkpoint, loadPrompt('checkpoint-template'))).toEqual({ ok: true, problems: [], issues: [] });
    const sections = parseSections(checkpoint);
    expect(sections[0]?.body).toMatch(/^> Great, that works\./);
    expect(sections[3]?.body).toBe('- 🔄 T1: Fix the login token refresh (focus)\n  - ✅ T2: Reproduce the failure');
    expect(await readFile(paths.notes, 'utf8')).toBe(loadPrompt('notes-template'));
  });

  it("rewrites once after Baton's validation reflection (which repeats the paths), then completes", async () => {
    const messages: ChatCompletionMessageParam[] = [...conversation('You are a coding agent.'), task()];
    await runWriterLoop(client, messages, batonTools, names);
    const reflection = renderPrompt('validation-reflection', {
      DETAILS: `${paths.checkpoint}: ## §8 Errors and fixes: the italic instruction line was changed`,
      CHECKPOINT_PATH: paths.checkpoint,
      MEMORY_PATH: paths.memory,
    });
    messages.push({ role: 'user', content: reflection });
    const turns = await runWriterLoop(client, messages, batonTools, names);
    expect(turns.map((t) => t.calls.map((c) => c.args['path']))).toEqual([[paths.checkpoint], []]);
    expect(turns[1]?.content).toBe('CHECKPOINT_COMPLETE');
    // The facts still come from the coding conversation, not from the writer's own reads and writes.
    const checkpoint = await readFile(paths.checkpoint, 'utf8');
    expect(checkCheckpointStructure(checkpoint, loadPrompt('checkpoint-template')).ok).toBe(true);
    expect(checkpoint).not.toContain(paths.checkpoint);

    messages.push({
      role: 'user',
      content: renderPrompt('writer-reminder', { CHECKPOINT_PATH: paths.checkpoint, MEMORY_PATH: paths.memory, NOTES_PATH: paths.notes }),
    });
    const after = await runWriterLoop(client, messages, batonTools, names);
    expect(after).toEqual([{ calls: [], content: 'CHECKPOINT_COMPLETE', finishReason: 'stop' }]);
  });

  it('quotes a very long request up to 200 characters with a paraphrase line', async () => {
    const long = `Please refactor the whole auth module. ${'Keep every public function signature stable. '.repeat(10)}`.trim();
    const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: long }, task()];
    await runWriterLoop(client, messages, batonTools, names);
    const first = parseSections(await readFile(paths.checkpoint, 'utf8'))[0]?.body ?? '';
    expect(first.startsWith(`> ${long.slice(0, 200).trimEnd()}...`)).toBe(true);
    expect(first).toContain('(Paraphrased: Please refactor the whole auth module.');
  });
});
