import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createWriterFiles, memoryPaths, type MemoryPaths, type WriterFiles } from '@baton/memory-store';
import OpenAI from 'openai';
import type { ResponseInputItem, Tool } from 'openai/resources/responses/responses';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startLoopbackModel, type LoopbackModel } from '../../src/index.ts';
import { responsesFrom } from './api-conversation.ts';
import { conversation, LATEST_REQUEST, NOTES_TEMPLATE, TEST_TEMPLATE, writerTask } from './conversation-fixture.ts';

/*
 * The extractive writer forked from a Codex session: the request offers Codex's own tools (captured from Codex CLI
 * 0.171.0: the function `exec_command {cmd}`, the custom `apply_patch`, and others it has no use for), no read or write
 * tool. It reads through the shell with `cat` and writes with patches, which here go through the memory store's own
 * patch parser and write guard, as the runtime's writer runs them.
 */

const FIXTURE = fileURLToPath(new URL('../../../../test/fixtures/agents/codex-responses-tool-apply-patch.json', import.meta.url));
const CODEX_TOOLS = (JSON.parse(readFileSync(FIXTURE, 'utf8')) as { requests: { body: { tools: Tool[] } }[] }).requests[0]?.body.tools ?? [];

let root: string;
let paths: MemoryPaths;
let files: WriterFiles;
let server: LoopbackModel;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'baton-loopback-codex-writer-'));
  paths = memoryPaths(root, { projectId: 'p1', sessionId: 's1' });
  files = createWriterFiles(paths);
  await mkdir(paths.sessionDir, { recursive: true });
  server = await startLoopbackModel({ mode: 'extractive' });
});

afterEach(async () => {
  await server.close();
  await rm(root, { recursive: true, force: true });
});

/** One turn of the writer: the calls it made (the shell's command, or the patch's text) and its final text. */
interface Turn {
  readonly calls: readonly { readonly tool: string; readonly text: string }[];
  readonly content: string;
}

/** Runs a call the way the writer's sandbox does: only `cat <path>` in the shell, and patches through the memory store. */
async function run(item: Record<string, unknown>): Promise<{ tool: string; text: string; output: string }> {
  if (item['type'] === 'custom_tool_call') {
    const patch = String(item['input']);
    try {
      const r = await files.applyPatch(patch);
      return { tool: String(item['name']), text: patch, output: r.changes.map((c) => `${c.action} ${c.path}`).join('\n') };
    } catch (err) {
      return { tool: String(item['name']), text: patch, output: `Error: ${(err as Error).message}` };
    }
  }
  const { cmd } = JSON.parse(String(item['arguments'])) as { cmd: string };
  const path = /^cat (\S+)$/.exec(cmd)?.[1];
  try {
    if (path === undefined) throw new Error(`${cmd} is not available`);
    return { tool: String(item['name']), text: cmd, output: await files.read(path) };
  } catch (err) {
    return { tool: String(item['name']), text: cmd, output: `Error: ${(err as Error).message}` };
  }
}

/** Drives the writer like Baton's Responses writer: stateless, each output item and each call's output sent back. */
async function writerLoop(input: ResponseInputItem[], maxTurns = 6): Promise<Turn[]> {
  const client = new OpenAI({ baseURL: server.baseURL, apiKey: 'writer', maxRetries: 0 });
  const turns: Turn[] = [];
  for (let t = 0; t < maxTurns; t++) {
    const res = await client.responses.create({ model: 'gpt-5.5', input, tools: CODEX_TOOLS, store: false, parallel_tool_calls: true });
    const output = res.output as unknown as Record<string, unknown>[];
    input.push(...(res.output as ResponseInputItem[]));
    const calls = output.filter((o) => o['type'] === 'function_call' || o['type'] === 'custom_tool_call');
    const done = await Promise.all(calls.map(run));
    turns.push({ calls: done.map(({ tool, text }) => ({ tool, text })), content: res.output_text });
    if (calls.length === 0) return turns;
    calls.forEach((call, i) => {
      const type = call['type'] === 'custom_tool_call' ? 'custom_tool_call_output' : 'function_call_output';
      input.push({ type, call_id: String(call['call_id']), output: done[i]?.output ?? '' });
    });
  }
  throw new Error(`the writer did not finish in ${maxTurns} turns`);
}

/** A Codex-like session: developer items first, the fixture conversation as Responses items, then the writer task. */
function codexInput(): ResponseInputItem[] {
  const { instructions, input } = responsesFrom([...conversation('You are Codex, a coding agent.'), writerTask(root)]);
  return [{ type: 'message', role: 'developer', content: [{ type: 'input_text', text: instructions }] }, ...input];
}

function section(text: string, n: number): string {
  const start = text.indexOf(`## §${n} `);
  const end = n === 11 ? text.length : text.indexOf(`## §${n + 1} `);
  return text.slice(start, end);
}

describe('extractive writer with Codex tools (a shell and a custom apply_patch)', () => {
  it('reads with cat (missing files come back as errors), adds the checkpoint and updates notes.md with patches, then completes', async () => {
    await writeFile(paths.notes, `${NOTES_TEMPLATE}\n## [turn 7 · 2025-01-01T10:00Z]\nRemember the flaky CI job on Node 20.\n`);
    const turns = await writerLoop(codexInput());

    expect(turns.map((t) => t.calls.map((c) => c.tool))).toEqual([['exec_command', 'exec_command', 'exec_command'], ['apply_patch', 'apply_patch'], []]);
    expect(turns[0]?.calls.map((c) => c.text)).toEqual([`cat ${paths.checkpoint}`, `cat ${paths.memory}`, `cat ${paths.notes}`]);
    // No checkpoint yet: it is added. notes.md exists: updated in place, back to its template.
    expect(turns[1]?.calls[0]?.text).toMatch(new RegExp(`^\\*\\*\\* Begin Patch\\n\\*\\*\\* Add File: ${paths.checkpoint}\\n\\+`));
    expect(turns[1]?.calls[1]?.text).toMatch(new RegExp(`^\\*\\*\\* Begin Patch\\n\\*\\*\\* Update File: ${paths.notes}\\n@@\\n-`));
    expect(turns[2]?.content).toBe('CHECKPOINT_COMPLETE');

    const checkpoint = await readFile(paths.checkpoint, 'utf8');
    for (const line of LATEST_REQUEST.split('\n')) expect(section(checkpoint, 1)).toContain(`> ${line}`);
    expect(section(checkpoint, 4)).toContain('- 🔄 T1 Fix the login token refresh (focus)');
    expect(section(checkpoint, 9)).toContain('branch: fix/login-refresh');
    expect(section(checkpoint, 11)).toContain('Remember the flaky CI job on Node 20.');
    expect(await readFile(paths.notes, 'utf8')).toBe(NOTES_TEMPLATE);
    // Stateless turns over one growing input: the later ones are served from the simulated prefix cache.
    expect(server.requests.map((r) => r.api)).toEqual(['openai-responses', 'openai-responses', 'openai-responses']);
    expect(server.stats().cachedTokens).toBeGreaterThan(2 * 1024);
  });

  it('updates an existing checkpoint in place (its structure kept), and a validation reflection rewrites what it wrote', async () => {
    await writeFile(paths.checkpoint, TEST_TEMPLATE);
    const input = codexInput();
    const first = await writerLoop(input);
    expect(first.map((t) => t.calls.map((c) => c.tool))).toEqual([['exec_command', 'exec_command', 'exec_command'], ['apply_patch'], []]);
    const patch = first[1]?.calls[0]?.text ?? '';
    expect(patch.startsWith(`*** Begin Patch\n*** Update File: ${paths.checkpoint}\n@@\n`)).toBe(true);
    // Every line of the file it read is removed, every line of the new one added.
    for (const line of TEST_TEMPLATE.trimEnd().split('\n')) expect(patch).toContain(`\n-${line}\n`);
    const full = await readFile(paths.checkpoint, 'utf8');
    const headings = (text: string): string[] => text.split('\n').filter((l) => l.startsWith('#'));
    expect(headings(full)).toEqual(headings(TEST_TEMPLATE));
    expect(section(full, 1)).toContain(`> ${LATEST_REQUEST.split('\n')[0] ?? ''}`);

    // The runtime's validation finds a problem: the writer patches the file again, from what it wrote (not re-read).
    input.push({ role: 'user', content: 'Checkpoint validation failed: §8 is over its budget. Fix the issues and write the file again.' });
    const second = await writerLoop(input);
    expect(second.map((t) => t.calls.map((c) => c.tool))).toEqual([['apply_patch'], []]);
    expect(second[1]?.content).toBe('CHECKPOINT_COMPLETE');
    const shorter = await readFile(paths.checkpoint, 'utf8');
    expect(shorter.length).toBeLessThan(full.length);
    expect(headings(shorter)).toEqual(headings(TEST_TEMPLATE));
  });

  it('with neither whole-file tools nor a shell and a patch tool, explains that it cannot write', async () => {
    const client = new OpenAI({ baseURL: server.baseURL, apiKey: 'writer', maxRetries: 0 });
    const shellOnly = CODEX_TOOLS.filter((t) => t.type !== 'custom');
    const res = await client.responses.create({ model: 'gpt-5.5', input: codexInput(), tools: shellOnly, store: false });
    expect(res.output_text).toMatch(/^Cannot write the checkpoint/);
  });
});
