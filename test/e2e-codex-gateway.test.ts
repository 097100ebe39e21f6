import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BatonClient, NatsTransport } from '@baton/client';
import { BatonGateway } from '@baton/gateway';
import type { PublishedEvent } from '@baton/protocol';
import { BatonDaemon, LmdbEventLog, verifySession } from '@baton/runtime';
import { extractiveStep, startLoopbackModel, startNatsServer, type LoopbackModel, type NatsServerHandle, type RecordedRequest, type ScriptStep } from '@baton/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_TAIL } from './support/conversation.ts';
import { CODEX_KEY, authOf, bodyOf, isUser, jsonLines, promptTokens, publishedOf, requestKind, runCodex, stderrLines, textOf, writeCodexConfig, type CodexBody, type CodexEvent, type Item } from './support/codex-run.ts';

/**
 * Codex CLI (`@openai/codex` 0.171.0, an agent nobody here wrote) runs headless through the gateway against the
 * loopback model, which plays Codex's model over a scripted multi-turn task on a scratch project — shell commands
 * (`exec_command`) and patches (the custom `apply_patch` tool) — and answers the daemon's checkpoint writers with the
 * extractive writer, which reads the memory files through Codex's shell and writes them with Codex's patch tool. The
 * conversation crosses the thresholds (fork-mode writers) and then the usable window (a rebuild, and Codex's later
 * requests rewritten upstream), while Codex's own compaction stays off; a last short run turns it on and the gateway
 * answers it from the checkpoint.
 */

const SESSION = 'codex-e2e';
/** A model Codex knows: with it Codex offers `apply_patch` (with an unknown model it has no patch tool). */
const MODEL_ID = 'gpt-5.5';
/** Gateway context window: usable window 74 073 − 9 259 (output, 12.5 %) − 14 814 (compaction, 20 %) = 50 000, rungs 10 000 / 20 000 / 30 000 / 37 000. */
const CONTEXT_WINDOW = 74_073;
const USABLE_WINDOW = 50_000;
const DAEMON_KEY = 'sk-baton-daemon';
/** Codex compacts when its last reported usage passes this; a billion keeps its compaction off. */
const NO_COMPACTION = 1_000_000_000;

const PROMPTS = [
  'Set up the warehouse project: add src/inventory.ts and src/orders.ts, show the inventory module, then count the lines.',
  'Add src/report.ts with a stock report, retitle it with a patch, read it back and show the other modules with cat.',
  'Write docs/summary.md describing every module, show it next to the report, then add src/index.ts and list the project.',
] as const;
/** The prompt of the short run in which Codex's own compaction is on, and the model's answer. */
const COMPACTION_PROMPT = 'Say which modules the project has now.';
const COMPACTION_ANSWER = 'The project has src/inventory.ts, src/orders.ts, src/report.ts and src/index.ts.';
/** Below the usage Codex was last told (about 18 000 tokens, the rewritten request), so it compacts before the turn. */
const COMPACTION_LIMIT = 12_000;
/** Codex's tools with a known model (captured from 0.171.0), by name (or type, for the two built-in ones). */
const CODEX_TOOL_NAMES = ['exec_command', 'write_stdin', 'request_user_input', 'apply_patch', 'view_image', 'get_goal', 'create_goal', 'update_goal', 'tool_search', 'web_search'];

const WORDS = ['ledger', 'pallet', 'bin', 'shipment', 'carrier', 'invoice', 'stock', 'supplier', 'batch', 'order', 'shelf', 'route'];

/** A deterministic TypeScript module of `lines` functions (about 41 tokens a line). */
function moduleSource(name: string, lines: number): string {
  const out = [`// ${name}: generated for the Codex end-to-end test`, `export const MODULE = '${name}';`];
  for (let i = 0; i < lines; i++) {
    const a = WORDS[i % WORDS.length] as string;
    const b = WORDS[(i * 7 + name.length) % WORDS.length] as string;
    out.push(`export function ${name}${a[0]?.toUpperCase()}${a.slice(1)}${i}(items: readonly number[]): number { /* ${b} rule ${i} of ${name} */ return items.reduce((s, x) => s + x * ${i + 1}, ${i % 5}); }`);
  }
  return `${out.join('\n')}\n`;
}

const SOURCES = {
  inventory: moduleSource('inventory', 80),
  orders: moduleSource('orders', 35),
  report: `${moduleSource('report', 100)}export const TITLE = 'Stock report';\n`,
  summary: `${moduleSource('summary', 70).trimEnd().replace(/^/gm, '    ')}\n`,
  index: moduleSource('index', 80),
};

/** An `apply_patch` input adding `path` with `content`. */
const addFile = (path: string, content: string): string => `*** Begin Patch\n*** Add File: ${path}\n${content.replace(/\n$/, '').replace(/^/gm, '+')}\n*** End Patch\n`;

type Action = { readonly patch: string } | { readonly cmd: string } | { readonly text: string };

/**
 * Codex's model, step by step: prompt i starts at `START[i]`; each later step answers the output of the call before.
 * Codex's first request already carries about 8 200 tokens (its instructions, skills, environment and tools). Reported
 * usage after each answer (about): 11.7k (rung 10 000), 13.3k, 13.4k, 16.8k, 18.5k, then 22.9k (rung 20 000), 23k,
 * 23.1k, 27.4k, 32.3k (rung 30 000), 35.6k, 35.6k, 42.8k (rung 37 000), 47.6k; the request after step 13 carries the
 * `src/index.ts` patch and its output and passes the usable window (50 000): rebuilt, the patch's output going verbatim
 * after the rebuilt context. After the rebuild about 14.4k (rung 10 000 again), 14.6k, 18k. Every rung and the window
 * are at least 1 000 tokens from the nearest usage, so ids and paths of another length do not move a crossing.
 */
const SCRIPT: readonly Action[] = [
  { patch: addFile('src/inventory.ts', SOURCES.inventory) },
  { patch: addFile('src/orders.ts', SOURCES.orders) },
  { cmd: 'cat src/inventory.ts' },
  { cmd: 'wc -l src/*.ts && cat src/orders.ts' },
  { text: 'Added src/inventory.ts and src/orders.ts (82 and 37 lines); the inventory module reads back as written.' },
  { patch: addFile('src/report.ts', SOURCES.report) },
  { patch: "*** Begin Patch\n*** Update File: src/report.ts\n@@\n-export const TITLE = 'Stock report';\n+export const TITLE = 'Warehouse stock report';\n*** End Patch\n" },
  { cmd: 'cat src/report.ts' },
  { cmd: 'cat src/inventory.ts src/orders.ts' },
  { text: 'Added src/report.ts titled "Warehouse stock report"; the other two modules are unchanged.' },
  { patch: addFile('docs/summary.md', SOURCES.summary) },
  { cmd: 'cat src/report.ts docs/summary.md' },
  { cmd: "sed -n '1,30p' docs/summary.md" },
  { patch: addFile('src/index.ts', SOURCES.index) },
  { cmd: 'ls src docs && wc -c src/*.ts docs/*.md' },
  { cmd: 'cat src/index.ts' },
  { text: 'Wrote docs/summary.md and src/index.ts; the project now has four modules and one document.' },
];
const START = [0, 5, 10] as const;
/** The first request sent rewritten: the one after the `src/index.ts` patch (see SCRIPT). */
const OVERFLOW_STEP = 14;

const callId = (step: number): string => `call_s${String(step).padStart(2, '0')}`;

function stepReply(step: number): ScriptStep {
  const action = SCRIPT[step];
  if (action === undefined) return { error: { status: 500, message: `Codex's script has no step ${step}` } };
  if ('text' in action) return { reply: { content: action.text } };
  if ('patch' in action) return { reply: { tool_calls: [{ id: callId(step), name: 'apply_patch', arguments: action.patch, kind: 'custom' }] } };
  return { reply: { tool_calls: [{ id: callId(step), name: 'exec_command', arguments: { cmd: action.cmd } }] } };
}

describe('Codex CLI through the gateway', () => {
  let nats: NatsServerHandle;
  let model: LoopbackModel;
  let dataDir: string;
  let scratch: string;
  let log: LmdbEventLog;
  let daemonTransport: NatsTransport;
  let daemon: BatonDaemon;
  let clientTransport: NatsTransport;
  let client: BatonClient;
  let observerTransport: NatsTransport;
  let observer: BatonClient;
  let gateway: BatonGateway;
  const gatewayWarnings: string[] = [];

  beforeAll(async () => {
    nats = await startNatsServer();
    model = await startLoopbackModel({ mode: 'scripted' });
    dataDir = await mkdtemp(join(tmpdir(), 'baton-codex-e2e-'));
    scratch = await mkdtemp(join(tmpdir(), 'baton-codex-scratch-'));
    log = LmdbEventLog.open({ path: join(dataDir, 'events') });
    daemonTransport = await NatsTransport.connect({ servers: nats.url });
    daemon = BatonDaemon.start({
      transport: daemonTransport,
      log,
      dataDir,
      poolSize: 2,
      model: { baseURL: model.baseURL, apiKey: DAEMON_KEY, maxRetries: 0, timeoutMs: 10_000 },
      tail: TEST_TAIL,
    });
    clientTransport = await NatsTransport.connect({ servers: nats.url });
    client = new BatonClient(clientTransport);
    observerTransport = await NatsTransport.connect({ servers: nats.url });
    observer = new BatonClient(observerTransport);
    gateway = await BatonGateway.start({
      upstream: model.baseURL,
      client,
      contextWindows: { [MODEL_ID]: CONTEXT_WINDOW },
      logger: (level, msg, data) => {
        if (level === 'warn' || level === 'error') gatewayWarnings.push(`${level}: ${msg} ${JSON.stringify(data ?? {})}`);
      },
    });
  });

  afterAll(async () => {
    await gateway?.close();
    await daemon?.stop();
    await observerTransport?.close();
    await clientTransport?.close();
    await daemonTransport?.close();
    await log?.close();
    await model?.close();
    await nats?.stop();
    if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
    if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
  });


  it('Codex finishes a long task through the gateway: fork-mode writers on its own tools, a rebuild on overflow, its own compaction answered from the checkpoint', { timeout: 120_000 }, async () => {
    const writerIdle = async (): Promise<void> => {
      const deadline = Date.now() + 30_000;
      while (Date.now() < deadline) {
        const status = await client.status(SESSION).catch(() => null);
        if (status === null || status.state.writer === 'idle') return;
        await new Promise((r) => setTimeout(r, 20));
      }
      throw new Error('a writer did not settle within 30 s');
    };
    // The loopback model: the daemon's writers (their own key) get the extractive writer; Codex (its key) its script.
    const codexSteps: number[] = [];
    let lastStep = -1;
    model.setResponder(async (request) => {
      if (authOf(request) === `Bearer ${DAEMON_KEY}`) return extractiveStep(request);
      // Codex's own compaction, should it ever reach the model (the test then sees it among the model's requests).
      if (requestKind(request) === 'compaction') return { reply: { content: 'SUMMARY: the task so far.' } };
      // Codex's model is slower than a checkpoint writer: a writer that started runs to its end before Codex's next
      // answer, so each rung starts its own writer at a known point of the task.
      await writerIdle();
      const body = bodyOf(request);
      const last = body.input.at(-1);
      if (isUser(last) && textOf(last) === COMPACTION_PROMPT) return { reply: { content: COMPACTION_ANSWER } };
      let step = lastStep + 1;
      const answered = typeof last?.['call_id'] === 'string' ? last['call_id'] : '';
      if (/^call_s\d+$/.test(answered) && String(last?.['type']).endsWith('_output')) step = Number(answered.slice(6)) + 1;
      else if (isUser(last)) {
        const prompt = PROMPTS.indexOf(textOf(last) as (typeof PROMPTS)[number]);
        if (prompt >= 0) step = START[prompt] as number;
      }
      lastStep = step;
      codexSteps.push(step);
      return stepReply(step);
    });

    const codexHome = join(scratch, 'codexhome');
    const home = join(scratch, 'home');
    const project = join(scratch, 'project');
    await Promise.all([mkdir(codexHome), mkdir(home), mkdir(project)]);
    await writeCodexConfig(codexHome, gateway.baseURL.replace(/\/v1$/, `/s/${SESSION}/v1`), MODEL_ID);

    const events: PublishedEvent[] = [];
    const stream = observer.events(SESSION);
    const collecting = (async () => {
      for await (const e of stream) events.push(e);
    })();

    // One `codex exec` per prompt, each later one resuming the thread (a new process reloading its history).
    const outputs: CodexEvent[][] = [];
    for (const [i, prompt] of PROMPTS.entries()) {
      const run = await runCodex({ cwd: project, home, codexHome, prompt, resume: i > 0, compactLimit: NO_COMPACTION, timeoutS: 60 });
      expect(stderrLines(run.stderr)).toEqual([]);
      expect(run.code).toBe(0);
      outputs.push(jsonLines(run.stdout));
    }

    // Codex did its task: every step of the script was asked for once, in order, and the files are on disk as patched.
    expect(codexSteps).toEqual(SCRIPT.map((_, i) => i));
    expect(await readFile(join(project, 'src/inventory.ts'), 'utf8')).toBe(SOURCES.inventory);
    expect(await readFile(join(project, 'src/orders.ts'), 'utf8')).toBe(SOURCES.orders);
    expect(await readFile(join(project, 'src/report.ts'), 'utf8')).toBe(SOURCES.report.replace("'Stock report'", "'Warehouse stock report'"));
    expect(await readFile(join(project, 'docs/summary.md'), 'utf8')).toBe(SOURCES.summary);
    expect(await readFile(join(project, 'src/index.ts'), 'utf8')).toBe(SOURCES.index);
    // Its own account: each run one completed turn; every patch applied and every command exited 0; its answers.
    for (const output of outputs) {
      expect(output.filter((e) => e.type === 'turn.completed')).toHaveLength(1);
      expect(output.filter((e) => e.type === 'turn.failed' || e.type === 'error')).toEqual([]);
    }
    const done = outputs.flat().flatMap((e) => (e.type === 'item.completed' && e.item !== undefined ? [e.item] : []));
    const patches = SCRIPT.filter((a) => 'patch' in a);
    const commands = SCRIPT.filter((a) => 'cmd' in a);
    expect(done.filter((i) => i.type === 'file_change').map((i) => i.status)).toEqual(patches.map(() => 'completed'));
    expect(done.filter((i) => i.type === 'command_execution').map((i) => [i.status, i.exit_code])).toEqual(commands.map(() => ['completed', 0]));
    expect(done.filter((i) => i.type === 'agent_message').map((i) => i.text)).toEqual(SCRIPT.flatMap((a) => ('text' in a ? [a.text] : [])));

    // Codex never compacted: every request it sent is a turn of its first window, with all its tools. (With its
    // compaction on at its default limit it would not have either, its window being far larger: the point is that it
    // never needed to, the gateway keeping what the model gets below the usable window.)
    const codexRequests = model.requests.filter((r) => authOf(r) === `Bearer ${CODEX_KEY}`);
    expect(codexRequests).toHaveLength(SCRIPT.length);
    for (const r of codexRequests) {
      expect(requestKind(r)).toBe('turn');
      expect(JSON.parse(String(r.headers['x-codex-turn-metadata']))).toMatchObject({ analytics_enabled: false, sandbox_mode: 'workspace-write' });
      expect(String(r.headers['x-codex-window-id'])).toMatch(/:0$/);
      expect(bodyOf(r).tools.map((t) => t['name'] ?? t['type'])).toEqual(CODEX_TOOL_NAMES);
    }
    expect(Math.max(...codexRequests.map((r) => promptTokens(bodyOf(r))))).toBeLessThan(USABLE_WINDOW);

    // The session's writers settle before its log is read.
    await writerIdle();
    await daemon.sessions.flushDecisions();
    expect(gatewayWarnings).toEqual([]);
    // Codex's history only grew: one daemon session, no new slice.
    expect([...log.read(`session/${SESSION}-s1`)]).toEqual([]);

    const records = [...log.read(`session/${SESSION}`)];
    const inputs = records.filter((r) => r.type !== 'decision' && r.type !== 'snapshot');
    const published = publishedOf(records);
    // The session is Codex's: the Responses API, its two developer items as the system prompt, its request fields.
    const opened = records[0]?.payload as { setup: { api?: string; system: unknown; params?: Item } };
    expect(opened.setup.api).toBe('openai-responses');
    expect(opened.setup.system).toEqual(bodyOf(codexRequests[0] as RecordedRequest).input.slice(0, 2));
    expect(Object.keys(opened.setup.params ?? {})).toEqual(['tool_choice', 'parallel_tool_calls', 'reasoning', 'include', 'prompt_cache_key', 'text']);
    // Thresholds: the four rungs before the rebuild, the first again after it.
    expect(published.filter((e) => e.type === 'threshold.crossed').map((e) => e['threshold'])).toEqual([10_000, 20_000, 30_000, 37_000, 10_000]);
    const writersStarted = published.filter((e) => e.type === 'writer.started');
    expect(writersStarted.map((e) => [e['mode'], e['trigger']])).toEqual(Array.from({ length: 5 }, () => ['fork', 'threshold']));
    const settled = inputs.filter((r) => r.type === 'writer.settled').map((r) => r.payload as { writerId: string; outcome: string });
    expect(settled.map((s) => s.outcome)).toEqual(writersStarted.map(() => 'success'));
    // One rebuild, on overflow, rendered from a checkpoint.
    expect(inputs.filter((r) => r.type === 'rebuild.requested').map((r) => (r.payload as { reason: string }).reason)).toEqual(['overflow']);
    expect(published.filter((e) => e.type === 'rebuild.completed').map((e) => e['outcome'])).toEqual(['rebuilt']);
    const rendered = inputs.find((r) => r.type === 'rebuild.rendered')?.payload as { ok: boolean; tailIds: string[] } | undefined;
    expect(rendered?.ok).toBe(true);
    const tailLength = rendered?.tailIds.length ?? 0;
    expect(tailLength).toBeGreaterThan(0);

    // Codex's requests as the model got them: its own bytes up to the overflow, then its developer items, the rebuilt
    // context (boundary and tail) and whatever Codex added since, every later request extending the one before.
    const bodies = codexRequests.map(bodyOf);
    const developer = JSON.stringify(bodies[0]?.input.slice(0, 2));
    const environment = JSON.stringify(bodies[0]?.input[2]);
    const rewrittenFrom = bodies.findIndex((b) => JSON.stringify(b.input[2]) !== environment);
    expect(rewrittenFrom).toBe(OVERFLOW_STEP);
    for (let i = 1; i < bodies.length; i++) {
      const before = bodies[i - 1]?.input ?? [];
      const now = bodies[i]?.input ?? [];
      expect(JSON.stringify(now.slice(0, 2))).toBe(developer);
      // Append-only, except at the rewrite: there the history before Codex's newest items gave way to the rebuilt context.
      if (i !== rewrittenFrom) expect(JSON.stringify(now.slice(0, before.length))).toBe(JSON.stringify(before));
      // Its newest item: the prompt that starts a turn, else the output of the call before.
      const prompt = START.findIndex((s) => s === i);
      const newest = now.at(-1);
      if (prompt >= 0) expect(isUser(newest) ? textOf(newest) : null).toBe(PROMPTS[prompt]);
      else expect(newest?.['call_id']).toBe(callId(i - 1));
    }
    const rewritten = bodies[rewrittenFrom];
    if (rewritten === undefined) throw new Error('no request was rewritten');
    // Developer items, boundary and the preserved tail, which ends with the patch's output Codex had just got, verbatim
    // (the model had not seen it: a rebuild never clears it).
    expect(rewritten.input).toHaveLength(2 + 1 + tailLength);
    const boundary = rewritten.input[2];
    expect(boundary).toMatchObject({ type: 'message', role: 'user' });
    expect(textOf(boundary)).toMatch(/^## Checkpoint\n/);
    expect(textOf(boundary)).toContain('## Recent user input (verbatim)');
    // Codex's environment context (its working directory and sandbox), a user message too, is among them verbatim.
    expect(textOf(boundary)).toContain(textOf(bodies[0]?.input[2]));
    const fresh = rewritten.input.at(-1);
    expect(fresh).toMatchObject({ type: 'custom_tool_call_output', call_id: callId(OVERFLOW_STEP - 1) });
    expect(String(fresh?.['output'])).toContain('A src/index.ts');
    expect(codexRequests[rewrittenFrom]?.rawBody).not.toContain(callId(0));
    // What the model got fell at the rewrite.
    expect(promptTokens(rewritten)).toBeLessThan(promptTokens(bodies[rewrittenFrom - 1] as CodexBody) / 2);
    // Every prompt Codex sent survives every rewritten request (in the rebuilt context or after it).
    for (let i = rewrittenFrom; i < codexRequests.length; i++) {
      const sent = PROMPTS.filter((_, p) => (START[p] as number) <= i);
      for (const prompt of sent) expect(codexRequests[i]?.rawBody).toContain(JSON.stringify(prompt).slice(1, -1));
    }

    // Every writer forked from the bytes the model got from Codex: its first request starts with exactly the items
    // (developer items first) and the tools of the Codex request it forked from, so the model's prefix cache serves all
    // of that prefix; then it read the memory files with Codex's shell and wrote the checkpoint with Codex's patch tool.
    const sources: number[] = [];
    for (const { writerId } of settled) {
      const writerRecords = [...log.read(`writer/${writerId}`)];
      const startedRecord = writerRecords.find((r) => r.type === 'writer.started')?.payload as { input: { mode: string }; prefixMessages: number } | undefined;
      expect(startedRecord?.input.mode).toBe('fork');
      const n = 2 + (startedRecord?.prefixMessages ?? 0);
      const calls = model.requests.filter((r) => authOf(r) === `Bearer ${DAEMON_KEY}` && r.rawBody.includes(`/staging/${writerId}/`));
      const first = calls[0];
      if (first === undefined) throw new Error(`writer ${writerId} made no model request`);
      const forked = bodyOf(first);
      const boundaryItem = JSON.stringify(forked.input[n - 1]);
      const source = codexRequests.find((r) => JSON.stringify(bodyOf(r).input[n - 1]) === boundaryItem);
      if (source === undefined) throw new Error(`no Codex request holds writer ${writerId}'s boundary at ${n - 1}`);
      sources.push(codexRequests.indexOf(source));
      const prefix = JSON.stringify(bodyOf(source).input.slice(0, n)).slice(0, -1);
      expect(source.rawBody).toContain(`"input":${prefix}`);
      expect(first.rawBody).toContain(`"input":${prefix}`);
      expect(JSON.stringify(forked.tools)).toBe(JSON.stringify(bodyOf(source).tools));
      expect(forked.model).toBe(MODEL_ID);
      expect(forked.input.length).toBeGreaterThan(n);
      // The loopback's prefix cache works item by item (model + tools, then each item): the fork's first call is
      // credited with its whole prefix, rounded down to 128-token blocks.
      const prefixTokens = promptTokens({ ...forked, input: forked.input.slice(0, n) });
      const replied = writerRecords.find((r) => r.type === 'model.replied')?.payload as { usage: { prompt: number; cached: number } } | undefined;
      expect(replied?.usage.cached).toBe(Math.floor(prefixTokens / 128) * 128);
      expect(replied?.usage.prompt).toBeGreaterThan(prefixTokens);
      const perf = events.find((e) => e.type === 'writer.cache_perf' && e.writer_id === writerId);
      expect(perf).toMatchObject({ status: 'completed', num_llm_calls: 3 });
      expect(perf?.type === 'writer.cache_perf' ? perf.cache_hit_rate : 0).toBeGreaterThan(0.6);
      // Its turns: `cat` of the checkpoint, memory and notes through `exec_command`; one `apply_patch` of the checkpoint.
      expect(calls).toHaveLength(3);
      const [, afterReads, afterPatch] = calls.map((r) => bodyOf(r).input);
      const reads = (afterReads ?? []).filter((i) => i['type'] === 'function_call').slice(-3);
      expect(reads.map((i) => [i['name'], (JSON.parse(String(i['arguments'])) as { cmd: string }).cmd.replace(/ .*\//, ' …/')])).toEqual([
        ['exec_command', 'cat …/checkpoint.md'],
        ['exec_command', 'cat …/MEMORY.md'],
        ['exec_command', 'cat …/notes.md'],
      ]);
      const patch = (afterPatch ?? []).filter((i) => i['type'] === 'custom_tool_call').at(-1);
      expect(patch?.['name']).toBe('apply_patch');
      expect(String(patch?.['input'])).toMatch(new RegExp(`^\\*\\*\\* Begin Patch\\n\\*\\*\\* (Add|Update) File: [^\\n]*/staging/${writerId}/[^\\n]*checkpoint\\.md\\n`));
    }
    // The writer after the rebuild forked from the rewritten bytes (developer items + rebuilt context + Codex's later items).
    expect(sources.map((i) => i >= rewrittenFrom)).toEqual([false, false, false, false, true]);
    // The checkpoint they committed: all eleven sections, with Codex's work in them.
    const checkpoint = await readFile(join(dataDir, 'memory', 'sessions', SESSION, 'checkpoint.md'), 'utf8');
    expect(checkpoint.split('\n').filter((l) => /^## §\d+ /.test(l))).toHaveLength(11);
    expect(checkpoint).toContain("`exec_command` (cmd: sed -n '1,30p' docs/summary.md)");

    const verified = verifySession(log, SESSION);
    expect(verified.divergence).toBeNull();
    expect(verified.writers).toBe(settled.length);

    // Codex's own compaction, turned on for one more turn: its usage is over the limit, so it first asks for a summary.
    // The gateway answers it from the checkpoint, with no model call; Codex starts its next window on that summary.
    const compacting = await runCodex({ cwd: project, home, codexHome, prompt: COMPACTION_PROMPT, resume: true, compactLimit: COMPACTION_LIMIT, timeoutS: 60 });
    expect(stderrLines(compacting.stderr)).toEqual([]);
    expect(compacting.code).toBe(0);
    expect(jsonLines(compacting.stdout).flatMap((e) => (e.type === 'item.completed' && e.item?.type === 'agent_message' ? [e.item.text] : []))).toEqual([COMPACTION_ANSWER]);
    expect(model.requests.filter((r) => requestKind(r) === 'compaction')).toEqual([]);
    const afterCompaction = model.requests.filter((r) => authOf(r) === `Bearer ${CODEX_KEY}`).slice(SCRIPT.length);
    expect(afterCompaction).toHaveLength(1);
    const next = afterCompaction[0] as RecordedRequest;
    expect(String(next.headers['x-codex-window-id'])).toMatch(/:1$/);
    const nextInput = bodyOf(next).input;
    expect(textOf(nextInput.at(-1))).toBe(COMPACTION_PROMPT);
    // Codex's new history starts from the summary it was answered with; the model gets what that summary stands for:
    // Codex's developer item, then the rebuilt context (its boundary first: the checkpoint, the user's words verbatim),
    // then what Codex added since — the same session going on, not a new one from nothing.
    expect(JSON.stringify(nextInput[0])).toBe(JSON.stringify(bodies[0]?.input[0]));
    const boundaryAfter = nextInput.find(isUser);
    expect(textOf(boundaryAfter)).toMatch(/^## Checkpoint\n/);
    expect(textOf(boundaryAfter)).toContain('## Recent user input (verbatim)');
    for (const prompt of PROMPTS) expect(next.rawBody).toContain(JSON.stringify(prompt).slice(1, -1));
    expect(nextInput.some((i) => isUser(i) && textOf(i).startsWith('Another language model started to solve this problem'))).toBe(false);
    await writerIdle();
    await daemon.sessions.flushDecisions();
    stream.stop();
    await collecting;
    const after = [...log.read(`session/${SESSION}`)];
    expect(after.filter((r) => r.type === 'rebuild.requested').map((r) => (r.payload as { reason: string }).reason)).toEqual(['overflow', 'compaction']);
    expect(publishedOf(after).some((e) => e.type === 'status' && String(e['text']).startsWith("Answering the agent's compaction from the checkpoint"))).toBe(true);
    // The compacted history continues the session it was answered for: no new slice, the turn recorded in the session.
    expect([...log.read(`session/${SESSION}-s1`)]).toEqual([]);
    const recordedAfter = after.filter((r) => r.type === 'messages.appended').flatMap((r) => (r.payload as { messages: { native?: Item }[] }).messages);
    expect(recordedAfter.some((m) => isUser(m.native) && textOf(m.native) === COMPACTION_PROMPT)).toBe(true);
    expect(gatewayWarnings).toEqual([]);
    expect(verifySession(log, SESSION).divergence).toBeNull();
  });
});
