import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LmdbEventLog } from '@baton/runtime';
import { type RecordedRequest } from '@baton/testing';
import { describe, expect, it } from 'vitest';
import { baton } from './support/baton-up.ts';
import { useScriptedAgentRig } from './support/scripted-agent-rig.ts';
import { claudeResult, prepareClaude, runClaude } from './support/claude-agent.ts';
import { CLAUDE_PROMPTS, CLAUDE_SOURCES, CLAUDE_START, claudeScript, EDITED_STOCK } from './support/claude-task.ts';
import { keyOf, scriptPlayer, stepId } from './support/script-player.ts';
import { sessionFacts, writersIdle } from './support/session-facts.ts';

/**
 * Claude Code (`@anthropic-ai/claude-code` 2.1.197) runs headless through `baton up` — the CLI as a user runs it —
 * against the loopback model, which plays Claude Code's model over a scripted task on a scratch project with Claude
 * Code's own tools (Write, Read, Bash, Edit, Glob, Grep), in two processes (the second resumes the first's
 * conversation), and answers the daemon's checkpoint writers (their own key) with the extractive writer. The session is
 * recorded as one Anthropic Messages conversation, and `baton replay --verify` re-folds it without a divergence.
 */

const SESSION = 'claude-e2e';
const MODEL_ID = 'claude-loop';
const CLAUDE_KEY = 'sk-ant-claude-e2e';
const WRITER_KEY = 'sk-baton-writer';
const ANTHROPIC_WRITER_KEY = 'sk-ant-baton-writer';
const CONTEXT_WINDOW = 200_000;

const ID_PREFIX = 'toolu_s';

type Block = Record<string, unknown>;
/** The `tool_result` blocks of a Messages request's last user message, by the id of the call they answer. */
function toolResultText(r: RecordedRequest, id: string): string {
  if (r.api !== 'anthropic-messages') return '';
  const last = r.wire.messages.at(-1);
  const blocks = Array.isArray(last?.content) ? (last.content as Block[]) : [];
  const result = blocks.find((b) => b['type'] === 'tool_result' && b['tool_use_id'] === id);
  const content = result?.['content'];
  if (typeof content === 'string') return content;
  return Array.isArray(content) ? (content as Block[]).map((c) => (typeof c['text'] === 'string' ? c['text'] : '')).join('\n') : '';
}

describe('Claude Code through baton up', () => {
  const rig = useScriptedAgentRig('baton-claude-e2e-');

  it('Claude Code finishes a task with its own tools, in two processes; one recorded session that replays without divergence', { timeout: 240_000 }, async () => {
    const { nats, model, scratch, client } = rig;
    const dataDir = join(scratch, 'data');
    const up = await rig.startUp({ dataDir, writerKey: WRITER_KEY, anthropicWriterKey: ANTHROPIC_WRITER_KEY, contextWindow: CONTEXT_WINDOW });
    const dirs = await prepareClaude(scratch, join(scratch, 'project'));
    const script = claudeScript(dirs.project);
    const player = scriptPlayer({ writerKeys: [WRITER_KEY, ANTHROPIC_WRITER_KEY], writersIdle: () => writersIdle(client, SESSION), prompts: CLAUDE_PROMPTS, start: CLAUDE_START, script, idPrefix: ID_PREFIX });
    model.setResponder((r) => player.respond(r));
    const baseUrl = `${up.origin}/s/${SESSION}`;

    const results = [];
    for (const [i, prompt] of CLAUDE_PROMPTS.entries()) {
      const run = await runClaude({ dirs, baseUrl, apiKey: CLAUDE_KEY, model: MODEL_ID, prompt, resume: i > 0, timeoutS: 90 });
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      results.push(claudeResult(run.stdout));
    }
    const claudeRequests = model.requests.filter((r) => keyOf(r) === CLAUDE_KEY);

    // Claude Code did its task: every step asked for once, in order; the files on disk as written and edited.
    expect(player.steps).toEqual(script.map((_, i) => i));
    expect(await readFile(join(dirs.project, 'src/stock.ts'), 'utf8')).toBe(EDITED_STOCK);
    expect(await readFile(join(dirs.project, 'src/ledger.ts'), 'utf8')).toBe(CLAUDE_SOURCES.ledger);
    expect(results.map((r) => [r.subtype, r.is_error, r.permission_denials.length])).toEqual([['success', false, 0], ['success', false, 0]]);
    expect(results.map((r) => r.result)).toEqual(script.flatMap((a) => ('text' in a ? [a.text] : [])));
    // Its tools ran for real: what each returned is in the request after it.
    const after = (step: number): RecordedRequest => {
      const r = claudeRequests.find((q) => toolResultText(q, stepId(ID_PREFIX, step)) !== '');
      if (r === undefined) throw new Error(`no request carries the result of step ${step}`);
      return r;
    };
    expect(toolResultText(after(2), stepId(ID_PREFIX, 2))).toContain("export const TITLE = 'Stock report';");
    expect(toolResultText(after(3), stepId(ID_PREFIX, 3))).toMatch(/^\s*62 src\/ledger\.ts\n\s*123 src\/stock\.ts\n\s*185 total$/);
    expect(toolResultText(after(7), stepId(ID_PREFIX, 7)).split('\n').sort()).toEqual(['src/ledger.ts', 'src/stock.ts']);
    expect(toolResultText(after(8), stepId(ID_PREFIX, 8))).toContain("export const TITLE = 'Depot stock report';");
    expect(model.requests.filter((r) => ![CLAUDE_KEY, WRITER_KEY, ANTHROPIC_WRITER_KEY].includes(keyOf(r)))).toEqual([]);

    // Claude Code made no call of its own besides the task's (no title or topic calls, nothing to another host).
    expect(player.sideCalls).toEqual([]);

    await writersIdle(client, SESSION);
    // `baton sessions` (the CLI, over the same NATS) lists the one session, in the default project, writer idle.
    const listed = await baton(['sessions', '--nats', nats.url, '--json']);
    expect(listed.code).toBe(0);
    const sessions = (JSON.parse(listed.stdout) as { sessions: { session_id: string; project_id: string; model: string; state: { writer: string; watermark: string | null } }[] }).sessions;
    expect(sessions.map((s) => [s.session_id, s.project_id, s.model, s.state.writer])).toEqual([[SESSION, 'default', MODEL_ID, 'idle']]);
    const stopped = await rig.stopUp();
    expect(stopped.stderr).toBe('');
    expect(stopped.code).toBe(0);

    const log = LmdbEventLog.open({ path: join(dataDir, 'events') });
    try {
      const facts = sessionFacts(log, SESSION);
      // One Anthropic Messages session with Claude Code's system blocks and request fields, both processes in it: the
      // resumed history continued the first (no new slice).
      const opened = facts.inputs[0]?.payload as { setup: { api?: string; system: unknown; params?: Record<string, unknown> } };
      expect(opened.setup.api).toBe('anthropic-messages');
      const firstWire = claudeRequests[0]?.wire as { system: unknown } | undefined;
      expect(JSON.stringify(opened.setup.system)).toBe(JSON.stringify(firstWire?.system));
      expect(Object.keys(opened.setup.params ?? {}).sort()).toEqual(['context_management', 'max_tokens', 'output_config', 'thinking']);
      expect([...log.read(`session/${SESSION}-s1`)]).toEqual([]);
      const appended = facts.inputs.filter((r) => r.type === 'messages.appended').flatMap((r) => (r.payload as { messages: { role: string }[] }).messages.map((m) => m.role));
      const lastClaude = claudeRequests.at(-1);
      expect(appended).toHaveLength(lastClaude?.api === 'anthropic-messages' ? lastClaude.wire.messages.length : -1);
      // Its first request crossed the first rung: one fork-mode writer, on Claude Code's own Read and Write tools, committed.
      expect(facts.thresholds).toEqual([29_600]);
      expect(facts.writersStarted).toEqual([['fork', 'threshold']]);
      expect(facts.settled.map((s) => s.outcome)).toEqual(['success']);
      const writerCalls = model.requests.filter((r) => keyOf(r) === ANTHROPIC_WRITER_KEY);
      const forked = writerCalls[0];
      if (forked?.api !== 'anthropic-messages' || firstWire === undefined) throw new Error('the writer made no Anthropic call');
      expect(JSON.stringify(forked.wire.system)).toBe(JSON.stringify(firstWire.system));
      expect(JSON.stringify(forked.wire.tools)).toBe(JSON.stringify((claudeRequests[0]?.wire as { tools: unknown }).tools));
      const writerToolCalls = writerCalls.flatMap((r) => r.conversation.items.filter((i) => i.role === 'assistant').at(-1)?.toolCalls ?? []).map((c) => c.name);
      expect(new Set(writerToolCalls)).toEqual(new Set(['Read', 'Write']));
    } finally {
      await log.close();
    }
    const checkpoint = await readFile(join(dataDir, 'memory', 'sessions', SESSION, 'checkpoint.md'), 'utf8');
    expect(checkpoint).toContain(`> ${CLAUDE_PROMPTS[0]}`);
    const replayed = await baton(['replay', SESSION, '--data-dir', dataDir, '--verify']);
    expect(replayed.stdout).toMatch(/no divergence/);
    expect(replayed.code).toBe(0);
  });
});
