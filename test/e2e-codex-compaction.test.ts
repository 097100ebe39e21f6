import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { verifySession } from '@baton/runtime';
import type { RecordedRequest, ScriptStep } from '@baton/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CODEX_KEY, authOf, bodyOf, isUser, jsonLines, requestKind, runCodex, stderrLines, textOf, writeCodexConfig, type Item } from './support/codex-run.ts';
import { startGatewayRig, until, type GatewayRig } from './support/gateway-rig.ts';

/**
 * Codex CLI with its own compaction on, at a limit below Baton's usable window, before any checkpoint exists (every
 * writer fails): Codex's summarisation request is answered by the gateway itself — an extractive summary fitted like
 * a rebuild, no upstream call — and Codex's next requests, which start from that summary, go on in the same daemon
 * session on the context the summary stands for, instead of opening a slice from nothing.
 */

const SESSION = 'codex-compacts-early';
const MODEL_ID = 'gpt-5.5';
/** Usable window 50 000 (see e2e-codex-gateway): Codex compacts far below it. */
const CONTEXT_WINDOW = 74_073;
/**
 * Codex's first request carries about 8 200 tokens; the last request of its first run (with the README's lines) about
 * 10 700, which Codex remembers: its second run compacts first.
 */
const COMPACT_LIMIT = 9_000;
const FIRST_PROMPT = 'List the files of this project and count the lines of README.md.';
const SECOND_PROMPT = 'Now say in one sentence what the project is.';
const SECOND_ANSWER = 'It is a small warehouse project with a README.';
const DAEMON_KEY = 'daemon-writer-key';

describe('Codex compacts before any checkpoint exists', () => {
  let rig: GatewayRig;
  let scratch: string;
  beforeAll(async () => {
    rig = await startGatewayRig({ nats: true, gateway: { contextWindows: { [MODEL_ID]: CONTEXT_WINDOW } }, writerKey: DAEMON_KEY });
    scratch = await mkdtemp(join(tmpdir(), 'baton-codex-compaction-'));
  });
  afterAll(async () => {
    await rig.stop();
    await rm(scratch, { recursive: true, force: true });
  });

  it("Codex's compaction never reaches the upstream, and its next requests stay in the same session", { timeout: 180_000 }, async () => {
    // The model: writers always fail (no checkpoint ever exists); Codex gets a command, then its answers.
    let step = 0;
    rig.model.setResponder((request: RecordedRequest): ScriptStep => {
      if (authOf(request) === `Bearer ${DAEMON_KEY}`) return { error: { status: 500, message: 'writers are down' } };
      if (requestKind(request) === 'compaction') return { reply: { content: 'SUMMARY FROM THE UPSTREAM (must never be asked for)' } };
      const last = bodyOf(request).input.at(-1);
      if (isUser(last) && textOf(last) === SECOND_PROMPT) return { reply: { content: SECOND_ANSWER } };
      step++;
      if (step === 1) return { reply: { tool_calls: [{ id: 'call_ls', name: 'exec_command', arguments: { cmd: 'ls -la && wc -l README.md && cat README.md' } }] } };
      return { reply: { content: 'There is one file, README.md, of 120 lines.' } };
    });
    const codexHome = join(scratch, 'codexhome');
    const home = join(scratch, 'home');
    const project = join(scratch, 'project');
    await Promise.all([mkdir(codexHome), mkdir(home), mkdir(project)]);
    await writeFile(join(project, 'README.md'), Array.from({ length: 120 }, (_, i) => `Warehouse project, line ${i + 1}: pallets, bins and shipments are tracked here.`).join('\n'));
    await writeCodexConfig(codexHome, `${rig.origin}/s/${SESSION}/v1`, MODEL_ID);

    const first = await runCodex({ cwd: project, home, codexHome, prompt: FIRST_PROMPT, resume: false, compactLimit: 1_000_000_000, timeoutS: 60 });
    expect(stderrLines(first.stderr)).toEqual([]);
    expect(first.code).toBe(0);
    // No writer succeeded: no checkpoint.
    const status = await rig.client.status(SESSION);
    expect(status.state.watermark).toBeNull();
    expect(status.files.checkpoint.exists).toBe(false);

    const second = await runCodex({ cwd: project, home, codexHome, prompt: SECOND_PROMPT, resume: true, compactLimit: COMPACT_LIMIT, timeoutS: 60 });
    expect(stderrLines(second.stderr)).toEqual([]);
    expect(second.code).toBe(0);
    expect(jsonLines(second.stdout).flatMap((e) => (e.type === 'item.completed' && e.item?.type === 'agent_message' ? [e.item.text] : []))).toEqual([SECOND_ANSWER]);

    // Codex did ask for a summary (the gateway saw it) — and the upstream never got that request.
    const codexRequests = rig.model.requests.filter((r) => authOf(r) === `Bearer ${CODEX_KEY}`);
    expect(codexRequests.filter((r) => requestKind(r) === 'compaction')).toEqual([]);
    const records = [...rig.log.read(`session/${SESSION}`)];
    expect(records.filter((r) => r.type === 'rebuild.requested').map((r) => (r.payload as { reason: string }).reason)).toEqual(['compaction']);
    const compacted = records.find((r) => r.type === 'rebuild.compacted')?.payload as { source: string } | undefined;
    expect(compacted?.source).toBe('extractive');

    // Its next request started from the summary (a new window of Codex's) and went on in the same daemon session: the
    // upstream got the context the summary stands for, and the turn was recorded in the session, no slice opened.
    const afterCompaction = codexRequests.at(-1) as RecordedRequest;
    expect(String(afterCompaction.headers['x-codex-window-id'])).toMatch(/:1$/);
    const input = bodyOf(afterCompaction).input;
    expect(textOf(input.at(-1))).toBe(SECOND_PROMPT);
    expect(afterCompaction.rawBody).toContain(FIRST_PROMPT);
    expect(input.some((i: Item) => isUser(i) && textOf(i).startsWith('The earlier part of this conversation was compacted'))).toBe(true);
    expect([...rig.log.read(`session/${SESSION}-s1`)]).toEqual([]);
    // The turn is recorded once its reply is complete (in the background): waited for, then the log replays as decided.
    const recorded = (): { native?: Item }[] =>
      [...rig.log.read(`session/${SESSION}`)].filter((r) => r.type === 'messages.appended').flatMap((r) => (r.payload as { messages: { native?: Item }[] }).messages);
    await until(() => recorded().some((m) => isUser(m.native) && textOf(m.native) === SECOND_PROMPT), 30_000);
    expect(await rig.daemon.sessions.waitWritersIdle(30_000)).toBe(true);
    await rig.daemon.sessions.flushDecisions();
    expect(verifySession(rig.log, SESSION).divergence).toBeNull();
  });
});
