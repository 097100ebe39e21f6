import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { baton } from './support/baton-up.ts';
import { useScriptedAgentRig } from './support/scripted-agent-rig.ts';
import { claudeResult, prepareClaude, runClaude } from './support/claude-agent.ts';
import { CODEX_KEY, jsonLines, runCodex, stderrLines, writeCodexConfig } from './support/codex-run.ts';
import {
  allWritersIdle,
  CLAUDE_CHAIN_PROMPTS,
  claudeChainScript,
  CODEX_PROMPTS,
  CODEX_SCRIPT,
  FACT_DECISION,
  FACT_ERROR,
  FACT_PATH,
  FINAL_REPORT,
  LEDGER,
  PI_PROMPTS,
  PI_SCRIPT,
  PI_START,
  RATES,
} from './support/handoff-chain-task.ts';
import { piAnswers, piEvents, preparePi, runPi } from './support/pi-agent.ts';
import { keyOf, scriptPlayer, type ScriptPlayer } from './support/script-player.ts';

/**
 * A handoff chain with real agents through `baton up` against the loopback model: pi (chat completions) works the
 * first half of a task on a scratch project; `baton handoff` gives a URL Codex (Responses) continues from with another
 * key; `baton handoff` of Codex's session gives one Claude Code (Anthropic Messages) finishes from. Each new agent's
 * first upstream request carries the earlier sessions — the boundary in its own API's shape, every user message after
 * the watermark verbatim, and what only pi saw (a path, an error, a decision) — and the lineage shows the chain both ways.
 */

const PI_SESSION = 'chain-pi';
const PI_MODEL = 'pi-loop';
const CODEX_MODEL = 'gpt-5.5';
const CLAUDE_MODEL = 'claude-loop';
const PI_KEY = 'sk-pi-chain';
const CLAUDE_KEY = 'sk-ant-claude-chain';
const WRITER_KEY = 'sk-baton-writer';
const ANTHROPIC_WRITER_KEY = 'sk-ant-baton-writer';
const CONTEXT_WINDOW = 200_000;
const HANDOFF_URL = /https?:\/\/[^\s"']+\/h\/bh_[A-Za-z0-9_-]{43}/;

type Item = Record<string, unknown>;
interface LineageEnd {
  readonly from_session: string;
  readonly kind: string;
  readonly checkpoint_version: number | null;
  readonly watermark: string | null;
}
/** A `runtime.sessions` entry as `baton sessions --json` prints it: where it came from, and who continues it. */
interface ListedSession {
  readonly session_id: string;
  readonly lineage?: LineageEnd;
  readonly successors?: { session_id: string; kind: string }[];
}

/** Where a listed session came from. */
const fromOf = (s: ListedSession | undefined): LineageEnd | undefined => s?.lineage;

const textOfParts = (content: unknown): string =>
  typeof content === 'string' ? content : Array.isArray(content) ? (content as Item[]).map((p) => (typeof p['text'] === 'string' ? p['text'] : '')).join('\n') : '';

/** The user messages a session recorded, in order, with their ids (from `baton replay --json`). */
async function recordedUserMessages(dataDir: string, session: string): Promise<{ id: string; text: string }[]> {
  const replay = await baton(['replay', session, '--data-dir', dataDir, '--json']);
  expect(replay.code).toBe(0);
  const records = replay.stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; payload?: { messages?: { id: string; role: string; content: unknown; native?: { content?: unknown } }[] } });
  // A message recorded in the agent's own API carries its content in `native` (a Responses item, an Anthropic message).
  const text = (m: { content: unknown; native?: { content?: unknown } }): string => textOfParts(m.content ?? m.native?.content);
  return records.flatMap((r) => (r.type === 'messages.appended' ? (r.payload?.messages ?? []) : [])).flatMap((m) => (m.role === 'user' ? [{ id: m.id, text: text(m) }] : []));
}

/** The user messages after `watermark` (all of them when there is none). */
function afterWatermark(messages: readonly { id: string; text: string }[], watermark: string | null): string[] {
  const at = watermark === null ? -1 : messages.findIndex((m) => m.id === watermark);
  return messages.slice(at + 1).map((m) => m.text);
}

describe('handoff chain: pi → Codex → Claude Code through baton up', () => {
  const rig = useScriptedAgentRig('baton-handoff-chain-');

  it('each new agent starts from the earlier sessions, finishes the task, and the lineage shows the chain both ways', { timeout: 300_000 }, async () => {
    const { nats, model, scratch, client } = rig;
    const dataDir = join(scratch, 'data');
    const up = await rig.startUp({ dataDir, writerKey: WRITER_KEY, anthropicWriterKey: ANTHROPIC_WRITER_KEY, contextWindow: CONTEXT_WINDOW });
    const { origin } = up;
    const writerKeys = [WRITER_KEY, ANTHROPIC_WRITER_KEY];
    const writersIdle = (): Promise<void> => allWritersIdle(client);
    const play = (player: ScriptPlayer): void => model.setResponder((r) => player.respond(r));
    const sessions = async (): Promise<ListedSession[]> => {
      const listed = await baton(['sessions', '--nats', nats.url, '--json']);
      expect(listed.code).toBe(0);
      return (JSON.parse(listed.stdout) as { sessions: ListedSession[] }).sessions;
    };
    // `baton handoff --json`: the reply with the base URL to give the new agent as it is (`/v1` included for the OpenAI APIs).
    const handoff = async (session: string, to: string): Promise<{ url: string; reply: Record<string, unknown> }> => {
      const run = await baton(['handoff', session, '--to', to, '--nats', nats.url, '--gateway', origin, '--json']);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      const reply = JSON.parse(run.stdout) as Record<string, unknown>;
      const url = String(reply['base_url']);
      expect(url).toMatch(HANDOFF_URL);
      expect(url.startsWith(`${origin}/h/`)).toBe(true);
      return { url, reply };
    };

    // 1. pi, on chat completions, works the first half: writes the ledger, sees its check fail, decides, records the rates.
    await mkdir(join(scratch, 'pi'));
    const piDirs = await preparePi(join(scratch, 'pi'), {
      api: 'openai-completions',
      baseUrl: `${origin}/s/${PI_SESSION}/v1`,
      apiKey: PI_KEY,
      compat: { supportsDeveloperRole: false, supportsReasoningEffort: false },
      model: { id: PI_MODEL, contextWindow: 128_000, maxTokens: 4096, reasoning: false },
    });
    const project = piDirs.project;
    const piPlayer = scriptPlayer({ writerKeys, writersIdle, prompts: PI_PROMPTS, start: PI_START, script: PI_SCRIPT, idPrefix: 'call_p' });
    play(piPlayer);
    const pi = await runPi({ dirs: piDirs, model: PI_MODEL, prompts: PI_PROMPTS, timeoutS: 90 });
    expect(pi.stderr).toBe('');
    expect(pi.code).toBe(0);
    expect(piPlayer.steps).toEqual(PI_SCRIPT.map((_, i) => i));
    expect(piAnswers(piEvents(pi.stdout)).map((a) => a.stopReason)).toEqual(['toolUse', 'toolUse', 'stop', 'toolUse', 'stop']);
    expect(await readFile(join(project, 'src/ledger.ts'), 'utf8')).toBe(LEDGER);
    expect(await readFile(join(project, FACT_PATH), 'utf8')).toBe(RATES);
    // pi's command failed with the error only it saw.
    const piRequests = model.requests.filter((r) => keyOf(r) === PI_KEY);
    expect(piRequests.some((r) => r.conversation.items.some((i) => i.toolResults.some((t) => t.output.includes(`Error: ${FACT_ERROR}`))))).toBe(true);
    // A checkpoint of pi's half, committed before the handoff.
    expect((await client.checkpoint(PI_SESSION)).result).toBe('started');
    await writersIdle();
    expect((await client.status(PI_SESSION)).last_outcome?.outcome).toBe('success');

    // 2. `baton handoff` to the Responses API; Codex continues from the URL with its own, different key.
    const first = await handoff(PI_SESSION, 'openai-responses');
    // pi's checkpoint was committed and no writer ran: the context is that checkpoint and pi's messages after it.
    expect(first.reply).toMatchObject({ basis: 'checkpoint+messages', writer: 'none' });
    expect(first.url).toMatch(/\/v1$/);
    const codexHome = join(scratch, 'codex');
    const codexUserHome = join(scratch, 'codex-home');
    await Promise.all([mkdir(codexHome), mkdir(codexUserHome)]);
    await writeCodexConfig(codexHome, first.url, CODEX_MODEL);
    const codexPlayer = scriptPlayer({ writerKeys, writersIdle, prompts: CODEX_PROMPTS, start: [0], script: CODEX_SCRIPT, idPrefix: 'call_c' });
    play(codexPlayer);
    const codex = await runCodex({ cwd: project, home: codexUserHome, codexHome, prompt: CODEX_PROMPTS[0], resume: false, compactLimit: 1_000_000_000, timeoutS: 90 });
    expect(stderrLines(codex.stderr)).toEqual([]);
    expect(codex.code).toBe(0);
    expect(codexPlayer.steps).toEqual(CODEX_SCRIPT.map((_, i) => i));
    expect(jsonLines(codex.stdout).filter((e) => e.type === 'turn.completed')).toHaveLength(1);
    const codexFirst = codexPlayer.first();
    if (codexFirst?.api !== 'openai-responses') throw new Error('Codex sent no Responses request');
    expect(keyOf(codexFirst)).toBe(CODEX_KEY);
    await writersIdle();
    const codexSession = (await sessions()).find((s) => fromOf(s)?.from_session === PI_SESSION)?.session_id;
    if (codexSession === undefined) throw new Error("no session lists pi's as where it came from");

    // 3. `baton handoff` of Codex's session to Anthropic Messages; Claude Code finishes the task from that URL.
    const second = await handoff(codexSession, 'anthropic-messages');
    const claudeDirs = await prepareClaude(scratch, project);
    const claudeScript = claudeChainScript(project);
    const claudePlayer = scriptPlayer({ writerKeys, writersIdle, prompts: CLAUDE_CHAIN_PROMPTS, start: [0], script: claudeScript, idPrefix: 'toolu_k' });
    play(claudePlayer);
    expect(second.url).not.toMatch(/\/v1$/);
    const claude = await runClaude({ dirs: claudeDirs, baseUrl: second.url, apiKey: CLAUDE_KEY, model: CLAUDE_MODEL, prompt: CLAUDE_CHAIN_PROMPTS[0], timeoutS: 90 });
    expect(claude.stderr).toBe('');
    expect(claude.code).toBe(0);
    expect(claudePlayer.steps).toEqual(claudeScript.map((_, i) => i));
    expect(claudeResult(claude.stdout)).toMatchObject({ subtype: 'success', is_error: false, result: 'The report now carries the bay 7 drift of 3 pallets; the depot task is done.' });
    const claudeFirst = claudePlayer.first();
    if (claudeFirst?.api !== 'anthropic-messages') throw new Error('Claude Code sent no Messages request');
    expect(keyOf(claudeFirst)).toBe(CLAUDE_KEY);
    // The task is finished on disk: every agent's part is there.
    expect(await readFile(join(project, 'src/report.ts'), 'utf8')).toBe(FINAL_REPORT);

    // 4. Lineage, both ways, in `baton sessions`.
    await writersIdle();
    const listed = await sessions();
    const byId = new Map(listed.map((s) => [s.session_id, s]));
    const claudeSession = listed.find((s) => fromOf(s)?.from_session === codexSession)?.session_id;
    if (claudeSession === undefined) throw new Error("no session lists Codex's as where it came from");
    const codexFrom = fromOf(byId.get(codexSession));
    const claudeFrom = fromOf(byId.get(claudeSession));
    expect(codexFrom).toMatchObject({ from_session: PI_SESSION, kind: 'handoff' });
    expect(codexFrom?.checkpoint_version).toEqual(expect.any(Number));
    expect(claudeFrom).toMatchObject({ from_session: codexSession, kind: 'handoff' });
    expect(fromOf(byId.get(PI_SESSION))).toBeUndefined();
    const successors = (sid: string): string[] => (byId.get(sid)?.successors ?? []).map((s) => s.session_id);
    expect(successors(PI_SESSION)).toEqual([codexSession]);
    expect(successors(codexSession)).toEqual([claudeSession]);

    const stopped = await rig.stopUp();
    expect(stopped.code).toBe(0);

    // 5. Each new agent's first upstream request carried the earlier sessions.
    const piUsers = await recordedUserMessages(dataDir, PI_SESSION);
    const codexUsers = await recordedUserMessages(dataDir, codexSession);
    expect(piUsers.map((m) => m.text)).toEqual([...PI_PROMPTS]);
    // Codex's session records only its own messages after the inherited context.
    expect(codexUsers.map((m) => m.text).filter((t) => !t.includes('<environment_context>'))).toEqual([...CODEX_PROMPTS]);

    // Codex (Responses): after its developer items and before its own first item, the inserted items are Responses
    // messages — no function calls or outputs (pi's tool calls are text facts there).
    const input = codexFirst.wire.input as Item[];
    const developer = input.findIndex((i) => i['role'] !== 'developer' && i['role'] !== 'system');
    const own = input.findIndex((i) => i['role'] === 'user' && textOfParts(i['content']).includes('<environment_context>'));
    expect(developer).toBeGreaterThan(0);
    expect(own).toBeGreaterThan(developer);
    const insertedForCodex = input.slice(developer, own);
    for (const item of insertedForCodex) {
      expect(item['type'] ?? 'message').toBe('message');
      expect(['user', 'assistant']).toContain(item['role']);
    }
    const codexContext = insertedForCodex.map((i) => textOfParts(i['content'])).join('\n');
    expect(codexContext).toMatch(/checkpoint/i);
    for (const text of afterWatermark(piUsers, codexFrom?.watermark ?? null)) expect(codexContext).toContain(text);
    for (const fact of [FACT_PATH, FACT_ERROR, FACT_DECISION]) expect(codexContext).toContain(fact);
    expect(textOfParts(input.at(-1)?.['content'])).toBe(CODEX_PROMPTS[0]);
    // Every later request of Codex carries the same inserted items in the same place, byte for byte.
    const codexRequests = model.requests.filter((r) => keyOf(r) === CODEX_KEY);
    expect(codexRequests).toHaveLength(CODEX_SCRIPT.length);
    for (const r of codexRequests) expect(JSON.stringify((r.wire as { input: Item[] }).input.slice(0, own))).toBe(JSON.stringify(input.slice(0, own)));

    // Claude Code (Anthropic): before its own first message (its date reminder and the prompt), the inserted messages
    // have text blocks only — no tool_use or tool_result blocks.
    const messages = claudeFirst.wire.messages as Item[];
    const mine = messages.findIndex((m) => m['role'] === 'user' && textOfParts(m['content']).includes(CLAUDE_CHAIN_PROMPTS[0]));
    expect(mine).toBeGreaterThanOrEqual(0);
    // The inserted context may share Claude Code's first user message (roles alternate): its blocks before the prompt count.
    const ownMessage = messages[mine] as Item;
    const ownBlocks = Array.isArray(ownMessage['content']) ? (ownMessage['content'] as Item[]) : [];
    const before: Item[] = [...messages.slice(0, mine), { role: 'user', content: ownBlocks.filter((b) => !textOfParts([b]).includes(CLAUDE_CHAIN_PROMPTS[0])) }];
    for (const m of before) {
      expect(['user', 'assistant', 'system']).toContain(m['role']);
      for (const block of Array.isArray(m['content']) ? (m['content'] as Item[]) : []) expect(block['type']).toBe('text');
    }
    const claudeContext = before.map((m) => textOfParts(m['content'])).join('\n');
    expect(claudeContext).toMatch(/checkpoint/i);
    for (const text of afterWatermark(piUsers, codexFrom?.watermark ?? null)) expect(claudeContext).toContain(text);
    for (const text of afterWatermark(codexUsers, claudeFrom?.watermark ?? null)) if (!text.includes('<environment_context>')) expect(claudeContext).toContain(text);
    for (const fact of [FACT_PATH, FACT_ERROR, FACT_DECISION]) expect(claudeContext).toContain(fact);
    // Every later request of Claude Code carries the same inserted context in the same place, byte for byte (markers
    // aside): the messages before its first one and the blocks before that message's own two (its date reminder and
    // the prompt), where the context shares the message so roles alternate.
    const bare = (value: unknown): string => JSON.stringify(value, (key, v: unknown) => (key === 'cache_control' ? undefined : v));
    const insertedOf = (list: readonly Item[]): unknown[] => {
      const blocks = list[mine]?.['content'];
      return [...list.slice(0, mine), ...(Array.isArray(blocks) ? (blocks as Item[]).slice(0, -2) : [])];
    };
    expect(insertedOf(messages).length).toBeGreaterThan(0);
    const claudeRequests = model.requests.filter((r) => keyOf(r) === CLAUDE_KEY && r.conversation.tools.length > 0);
    expect(claudeRequests).toHaveLength(claudeScript.length);
    for (const r of claudeRequests) expect(bare(insertedOf((r.wire as { messages: Item[] }).messages))).toBe(bare(insertedOf(messages)));

    // 6. Replay: every session of the chain re-folds without a divergence, and the new sessions' timelines name where they came from.
    for (const sid of [PI_SESSION, codexSession, claudeSession]) {
      const verified = await baton(['replay', sid, '--data-dir', dataDir, '--verify']);
      expect(verified.stdout).toMatch(/no divergence/);
      expect(verified.code).toBe(0);
    }
    expect((await baton(['replay', codexSession, '--data-dir', dataDir])).stdout).toContain(PI_SESSION);
    expect((await baton(['replay', claudeSession, '--data-dir', dataDir])).stdout).toContain(codexSession);
  });
});
