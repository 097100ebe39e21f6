import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BatonClient, NatsTransport } from '@baton/client';
import { BatonGateway } from '@baton/gateway';
import type { PublishedEvent } from '@baton/protocol';
import { BatonDaemon, LmdbEventLog, verifySession } from '@baton/runtime';
import { extractiveStep, startLoopbackModel, startNatsServer, type LoopbackModel, type NatsServerHandle, type RecordedRequest, type ScriptStep } from '@baton/testing';
import { countTokens } from 'gpt-tokenizer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_TAIL } from './support/conversation.ts';

/**
 * pi (`@mariozechner/pi-coding-agent`, an agent nobody here wrote) runs headless through the gateway against the
 * loopback model, which plays pi's model over a scripted multi-turn task on a scratch project and answers the daemon's
 * checkpoint writers with the extractive writer. The conversation crosses the thresholds (fork-mode writers) and then
 * the usable window (a rebuild, and pi's later requests rewritten upstream), while pi's own compaction stays off.
 */

const PI_BIN = fileURLToPath(new URL('../node_modules/.bin/pi', import.meta.url));
const SESSION = 'pi-e2e';
const MODEL_ID = 'pi-loop';
/** Gateway context window for pi's model: usable window 80 000 − 20 000 − 32 000 = 28 000, rungs 5 600 / 11 200 / 15 000. */
const CONTEXT_WINDOW = 80_000;
const USABLE_WINDOW = 28_000;
/** pi's own view of the window: its compaction would fire at 40 000 − 16 384 = 23 616 reported tokens if it were on. */
const PI_CONTEXT_WINDOW = 40_000;
const PI_KEY = 'sk-pi-e2e';
const DAEMON_KEY = 'sk-baton-daemon';

const PROMPTS = [
  'Set up the warehouse project: write src/inventory.ts and src/orders.ts, read the inventory module back, then count the lines with bash.',
  'Add src/report.ts with a stock report, retitle it with an edit, read it back and show the other modules with cat.',
  'Write docs/summary.md describing every module, show it next to the report, then add src/index.ts and list the project.',
] as const;

const WORDS = ['ledger', 'pallet', 'bin', 'shipment', 'carrier', 'invoice', 'stock', 'supplier', 'batch', 'order', 'shelf', 'route'];

/** A deterministic TypeScript module of `lines` functions (about 41 tokens a line). */
function moduleSource(name: string, lines: number): string {
  const out = [`// ${name}: generated for the pi end-to-end test`, `export const MODULE = '${name}';`];
  for (let i = 0; i < lines; i++) {
    const a = WORDS[i % WORDS.length] as string;
    const b = WORDS[(i * 7 + name.length) % WORDS.length] as string;
    out.push(`export function ${name}${a[0]?.toUpperCase()}${a.slice(1)}${i}(items: readonly number[]): number { /* ${b} rule ${i} of ${name} */ return items.reduce((s, x) => s + x * ${i + 1}, ${i % 5}); }`);
  }
  return `${out.join('\n')}\n`;
}

/** File contents, sized so each step lands clear of the rungs and the window (see SCRIPT). */
const SOURCES = {
  inventory: moduleSource('inventory', 80),
  orders: moduleSource('orders', 50),
  report: `${moduleSource('report', 100)}export const TITLE = 'Stock report';\n`,
  summary: moduleSource('summary', 70).replace(/^/gm, '    '),
  index: moduleSource('index', 80),
};

type Action =
  | { readonly tool: 'write'; readonly path: string; readonly content: string }
  | { readonly tool: 'read'; readonly path: string }
  | { readonly tool: 'edit'; readonly path: string; readonly oldText: string; readonly newText: string }
  | { readonly tool: 'bash'; readonly command: string }
  | { readonly text: string };

/**
 * pi's model, step by step: prompt i starts at `START[i]`; each later step answers the tool result of the one before.
 * Reported usage after each answer (about): 4.6k, 6.7k (rung 5 600), 6.7k, 10k, 12k (rung 11 200), then 16.3k
 * (rung 15 000), 16.4k, 16.5k, 20.6k; the request after step 8 carries about 9.5k tokens of `cat` output and passes
 * the usable window (28 000): rebuilt, the `cat` output going verbatim after the rebuilt context. After the rebuild
 * about 16.5k (the ladder again: 5 600, 11 200 and 15 000 at once, one writer and one queued), 16.6k, 19.7k, 26.9k;
 * the request after step 12 passes the window again: rebuilt on top of the first, then about 9k (5 600), 12.4k
 * (11 200, queued behind the running writer), 12.8k.
 */
const SCRIPT: readonly Action[] = [
  { tool: 'write', path: 'src/inventory.ts', content: SOURCES.inventory },
  { tool: 'write', path: 'src/orders.ts', content: SOURCES.orders },
  { tool: 'read', path: 'src/inventory.ts' },
  { tool: 'bash', command: 'wc -l src/*.ts && cat src/orders.ts' },
  { text: 'Wrote src/inventory.ts and src/orders.ts (82 and 52 lines); the inventory module reads back as written.' },
  { tool: 'write', path: 'src/report.ts', content: SOURCES.report },
  { tool: 'edit', path: 'src/report.ts', oldText: "'Stock report'", newText: "'Warehouse stock report'" },
  { tool: 'read', path: 'src/report.ts' },
  { tool: 'bash', command: 'cat src/inventory.ts src/orders.ts src/report.ts' },
  { text: 'Added src/report.ts titled "Warehouse stock report"; the other two modules are unchanged.' },
  { tool: 'write', path: 'docs/summary.md', content: SOURCES.summary },
  { tool: 'bash', command: 'cat src/report.ts docs/summary.md' },
  { tool: 'read', path: 'docs/summary.md' },
  { tool: 'write', path: 'src/index.ts', content: SOURCES.index },
  { tool: 'bash', command: 'ls -la src docs && wc -c src/*.ts docs/*.md' },
  { text: 'Wrote docs/summary.md and src/index.ts; the project now has four modules and one document.' },
];
const START = [0, 5, 10] as const;

const callId = (step: number): string => `call_s${String(step).padStart(2, '0')}`;

function stepReply(step: number): ScriptStep {
  const action = SCRIPT[step];
  if (action === undefined) return { error: { status: 500, message: `pi's script has no step ${step}` } };
  if ('text' in action) return { reply: { content: action.text, finish_reason: 'stop' } };
  const { tool, ...args } = action;
  const call = tool === 'edit' ? { path: action.path, edits: [{ oldText: action.oldText, newText: action.newText }] } : args;
  return { reply: { tool_calls: [{ id: callId(step), name: tool, arguments: call }] } };
}

interface WireMessage {
  readonly role: string;
  readonly content?: unknown;
  readonly tool_call_id?: string;
  readonly tool_calls?: readonly { id: string; function: { name: string } }[];
}
interface WireBody {
  readonly model: string;
  readonly messages: readonly WireMessage[];
  readonly tools?: readonly unknown[];
}

const bodyOf = (r: RecordedRequest): WireBody => JSON.parse(r.rawBody) as WireBody;
const authOf = (r: RecordedRequest): string => String(r.headers.authorization ?? '');
const textOf = (content: unknown): string => (typeof content === 'string' ? content : JSON.stringify(content ?? null));

/** The text of a user message as pi sends it: a string, or text parts. */
function userText(m: WireMessage): string {
  if (typeof m.content === 'string') return m.content;
  if (Array.isArray(m.content)) return (m.content as { type?: string; text?: string }[]).map((p) => (p.type === 'text' ? (p.text ?? '') : '')).join('');
  return '';
}

/** Runs `pi` under `timeout`: isolated config and HOME, the scratch project as cwd, nothing but the gateway to talk to. */
async function runPi(options: { cwd: string; home: string; agentDir: string; prompts: readonly string[]; timeoutS: number }): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const args = [
    '-k', '5', String(options.timeoutS), PI_BIN,
    '-p', '--mode', 'json', '--no-session', '--offline',
    '--no-extensions', '--no-skills', '--no-prompt-templates', '--no-themes', '--no-context-files',
    '--provider', 'baton', '--model', MODEL_ID,
    ...options.prompts,
  ];
  const child = spawn('timeout', args, {
    cwd: options.cwd,
    env: {
      PATH: process.env['PATH'] ?? '/usr/bin:/bin',
      HOME: options.home,
      TMPDIR: options.home,
      PI_CODING_AGENT_DIR: options.agentDir,
      PI_OFFLINE: '1',
      PI_SKIP_VERSION_CHECK: '1',
      PI_TELEMETRY: '0',
      NO_COLOR: '1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString('utf8');
  });
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString('utf8');
  });
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (c) => resolve(c));
  });
  return { code, stdout, stderr };
}

describe('pi through the gateway', () => {
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
    dataDir = await mkdtemp(join(tmpdir(), 'baton-pi-e2e-'));
    scratch = await mkdtemp(join(tmpdir(), 'baton-pi-scratch-'));
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

  it('pi finishes a long task through the gateway: fork-mode writers, a rebuild on overflow, no compaction of its own', { timeout: 120_000 }, async () => {
    const writerIdle = async (): Promise<void> => {
      const deadline = Date.now() + 30_000;
      while (Date.now() < deadline) {
        const status = await client.status(SESSION).catch(() => null);
        if (status === null || status.state.writer === 'idle') return;
        await new Promise((r) => setTimeout(r, 20));
      }
      throw new Error('a writer did not settle within 30 s');
    };
    // The loopback model: the daemon's writers (their own key) get the extractive writer; pi (its key) gets its script.
    const piSteps: number[] = [];
    let lastStep = -1;
    model.setResponder(async (request) => {
      if (authOf(request) === `Bearer ${DAEMON_KEY}`) return extractiveStep(request);
      // pi's model is slower than a checkpoint writer: a writer that started runs to its end before pi's next answer,
      // so each rung starts its own writer at a known point of the task (and the run does not depend on timing).
      await writerIdle();
      const body = bodyOf(request);
      if (body.tools === undefined || body.tools.length === 0) return { reply: { content: 'no summary today', finish_reason: 'stop' } };
      const last = body.messages.at(-1);
      let step = lastStep + 1;
      if (last?.role === 'tool' && /^call_s\d+$/.test(last.tool_call_id ?? '')) step = Number(last.tool_call_id?.slice(6)) + 1;
      else if (last?.role === 'user') {
        const prompt = PROMPTS.indexOf(userText(last) as (typeof PROMPTS)[number]);
        if (prompt >= 0) step = START[prompt] as number;
      }
      lastStep = step;
      piSteps.push(step);
      return stepReply(step);
    });

    // pi's configuration: one provider whose base URL is the gateway with a fixed session id, its compaction off.
    const agentDir = join(scratch, 'agent');
    const home = join(scratch, 'home');
    const project = join(scratch, 'project');
    await Promise.all([mkdir(agentDir), mkdir(home), mkdir(project)]);
    const baseUrl = gateway.baseURL.replace(/\/v1$/, `/s/${SESSION}/v1`);
    await writeFile(
      join(agentDir, 'models.json'),
      JSON.stringify({
        providers: {
          baton: {
            baseUrl,
            api: 'openai-completions',
            apiKey: PI_KEY,
            compat: { supportsDeveloperRole: false, supportsReasoningEffort: false },
            models: [{ id: MODEL_ID, name: 'pi loopback', reasoning: false, input: ['text'], contextWindow: PI_CONTEXT_WINDOW, maxTokens: 4096 }],
          },
        },
      }),
    );
    await writeFile(join(agentDir, 'settings.json'), JSON.stringify({ compaction: { enabled: false } }));

    const events: PublishedEvent[] = [];
    const stream = observer.events(SESSION);
    const collecting = (async () => {
      for await (const e of stream) events.push(e);
    })();

    const pi = await runPi({ cwd: project, home, agentDir, prompts: PROMPTS, timeoutS: 90 });
    expect(pi.stderr).toBe('');
    expect(pi.code).toBe(0);

    // pi did its task: every step of the script was asked for once, in order, and the files are on disk.
    expect(piSteps).toEqual(SCRIPT.map((_, i) => i));
    expect(await readFile(join(project, 'src/report.ts'), 'utf8')).toBe(SOURCES.report.replace("'Stock report'", "'Warehouse stock report'"));
    expect(await readFile(join(project, 'src/index.ts'), 'utf8')).toBe(SOURCES.index);
    const output = pi.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; message?: { role?: string; stopReason?: string; usage?: { input: number; cacheRead: number } } });
    expect(output.filter((e) => e.type === 'agent_end')).toHaveLength(PROMPTS.length);
    const answers = output.flatMap((e) => (e.type === 'message_end' && e.message?.role === 'assistant' ? [e.message] : []));
    expect(answers.map((m) => m.stopReason)).toEqual(SCRIPT.map((a) => ('text' in a ? 'stop' : 'toolUse')));
    // pi never compacted: no compaction event in its output, and no call without tools (its summarisation call) or with
    // its summarisation prompt reached the model. (With its compaction on it would have: its usage passed 40 000 − 16 384.)
    expect(output.filter((e) => e.type.startsWith('compaction') || e.type.startsWith('auto_retry'))).toEqual([]);
    const piRequests = model.requests.filter((r) => authOf(r) === `Bearer ${PI_KEY}`);
    expect(piRequests).toHaveLength(SCRIPT.length);
    for (const r of piRequests) {
      expect(bodyOf(r).tools).toHaveLength(4);
      expect(r.rawBody).not.toContain('context summarization assistant');
    }
    // The usage pi was told is that of what the model got: never above the usable window.
    const contextOf = (i: number): number => (answers[i]?.usage?.input ?? 0) + (answers[i]?.usage?.cacheRead ?? 0);
    expect(Math.max(...answers.map((_, i) => contextOf(i)))).toBeLessThan(USABLE_WINDOW);

    // The session's writers settle before its log is read.
    const deadline = Date.now() + 30_000;
    while ((await client.status(SESSION)).state.writer !== 'idle' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await daemon.sessions.flushDecisions();
    stream.stop();
    await collecting;
    expect(gatewayWarnings).toEqual([]);
    // pi's history only grew: one daemon session, no new slice.
    expect([...log.read(`session/${SESSION}-s1`)]).toEqual([]);

    const records = [...log.read(`session/${SESSION}`)];
    const inputs = records.filter((r) => r.type !== 'decision' && r.type !== 'snapshot');
    const published = records
      .flatMap((r) => (r.type === 'decision' ? (r.payload as { effects: { kind: string; event?: { type: string } & Record<string, unknown> }[] }).effects : []))
      .flatMap((e) => (e.kind === 'publish' && e.event !== undefined ? [e.event] : []));
    // Thresholds: the three rungs before the first rebuild, the re-armed ladder after it, and again after the second.
    expect(published.filter((e) => e.type === 'threshold.crossed').map((e) => e['threshold'])).toEqual([5_600, 11_200, 15_000, 5_600, 11_200, 15_000, 5_600, 11_200]);
    const writersStarted = published.filter((e) => e.type === 'writer.started');
    expect(writersStarted.map((e) => [e['mode'], e['trigger']])).toEqual([
      ['fork', 'threshold'],
      ['fork', 'threshold'],
      ['fork', 'threshold'],
      ['fork', 'threshold'],
      ['fork', 'pending'],
      ['fork', 'threshold'],
      ['fork', 'pending'],
    ]);
    const settled = inputs.filter((r) => r.type === 'writer.settled').map((r) => r.payload as { writerId: string; outcome: string });
    expect(settled.map((s) => s.outcome)).toEqual(writersStarted.map(() => 'success'));
    // Two rebuilds, on overflow, each rendered from a checkpoint.
    expect(inputs.filter((r) => r.type === 'rebuild.requested').map((r) => (r.payload as { reason: string }).reason)).toEqual(['overflow', 'overflow']);
    expect(published.filter((e) => e.type === 'rebuild.completed').map((e) => e['outcome'])).toEqual(['rebuilt', 'rebuilt']);
    const rendered = inputs.find((r) => r.type === 'rebuild.rendered')?.payload as { ok: boolean; tailIds: string[] } | undefined;
    expect(rendered?.ok).toBe(true);
    const tailLength = rendered?.tailIds.length ?? 0;
    expect(tailLength).toBeGreaterThan(0);

    // pi's requests as the model got them: its own bytes up to the overflow, then its system prompt, the rebuilt context
    // (boundary and tail) and whatever pi added since, every later request extending the one before.
    const bodies = piRequests.map(bodyOf);
    const system = JSON.stringify(bodies[0]?.messages[0]);
    const firstPrompt = JSON.stringify(bodies[0]?.messages[1]);
    const rewrittenFrom = bodies.findIndex((b) => JSON.stringify(b.messages[1]) !== firstPrompt);
    expect(rewrittenFrom).toBe(9);
    // The second rewrite: a new boundary message.
    const secondRewrite = bodies.findIndex((b, i) => i > rewrittenFrom && JSON.stringify(b.messages[1]) !== JSON.stringify(bodies[rewrittenFrom]?.messages[1]));
    expect(secondRewrite).toBe(13);
    for (let i = 1; i < bodies.length; i++) {
      const before = bodies[i - 1]?.messages ?? [];
      const now = bodies[i]?.messages ?? [];
      expect(JSON.stringify(now[0])).toBe(system);
      // Append-only, except at the rewrite: there the history before pi's newest messages gave way to the rebuilt context.
      if (i !== rewrittenFrom && i !== secondRewrite) expect(JSON.stringify(now.slice(0, before.length))).toBe(JSON.stringify(before));
      // Its newest message: the prompt that starts a turn, else the result of the call before.
      const prompt = START.findIndex((s) => s === i);
      const newest = now.at(-1);
      if (prompt >= 0) expect(newest?.role === 'user' ? userText(newest) : null).toBe(PROMPTS[prompt]);
      else expect(newest?.tool_call_id).toBe(callId(i - 1));
    }
    const rewritten = bodies[rewrittenFrom];
    if (rewritten === undefined) throw new Error('no request was rewritten');
    // System, boundary, the preserved tail, and verbatim the `cat` output pi had just got (the model had not seen it).
    expect(rewritten.messages).toHaveLength(2 + tailLength + 1);
    const fresh = rewritten.messages.at(-1);
    expect(fresh?.tool_call_id).toBe(callId(8));
    expect(textOf(fresh?.content)).toContain("export const MODULE = 'report';");
    expect(textOf(fresh?.content)).not.toContain('content cleared');
    const boundaryText = textOf(rewritten.messages[1]?.content);
    expect(rewritten.messages[1]?.role).toBe('user');
    expect(boundaryText).toContain('## Session checkpoint');
    expect(boundaryText).toContain('## Recent user input (verbatim)');
    expect(piRequests[rewrittenFrom]?.rawBody).not.toContain(callId(0));
    // pi saw the usage of what was sent: its context fell at the rewrite.
    expect(contextOf(rewrittenFrom)).toBeLessThan(contextOf(rewrittenFrom - 1));
    expect(contextOf(secondRewrite)).toBeLessThan(contextOf(secondRewrite - 1) / 2);
    // Every user message pi sent survives every rewritten request (in the rebuilt context or after it).
    for (let i = rewrittenFrom; i < piRequests.length; i++) {
      const sent = PROMPTS.filter((_, p) => (START[p] as number) <= i);
      for (const prompt of sent) expect(piRequests[i]?.rawBody).toContain(JSON.stringify(prompt).slice(1, -1));
    }

    // Every writer forked from the bytes the model got from pi: its first request starts with exactly the messages
    // (and tools) of the pi request it forked from, so the model's prefix cache serves all of that prefix.
    const sources: number[] = [];
    for (const { writerId } of settled) {
      const writerRecords = [...log.read(`writer/${writerId}`)];
      const startedRecord = writerRecords.find((r) => r.type === 'writer.started')?.payload as { input: { mode: string }; prefixMessages: number } | undefined;
      expect(startedRecord?.input.mode).toBe('fork');
      const k = startedRecord?.prefixMessages ?? 0;
      const first = model.requests.find((r) => authOf(r) === `Bearer ${DAEMON_KEY}` && r.rawBody.includes(`/staging/${writerId}/`));
      if (first === undefined) throw new Error(`writer ${writerId} made no model request`);
      const forked = bodyOf(first);
      const boundary = JSON.stringify(forked.messages[k - 1]);
      const source = piRequests.find((r) => JSON.stringify(bodyOf(r).messages[k - 1]) === boundary);
      if (source === undefined) throw new Error(`no pi request holds writer ${writerId}'s boundary at ${k - 1}`);
      sources.push(piRequests.indexOf(source));
      const prefix = JSON.stringify(bodyOf(source).messages.slice(0, k)).slice(0, -1);
      expect(source.rawBody).toContain(`"messages":${prefix}`);
      expect(first.rawBody).toContain(`"messages":${prefix}`);
      expect(JSON.stringify(forked.tools)).toBe(JSON.stringify(bodyOf(source).tools));
      expect(forked.model).toBe(MODEL_ID);
      expect(forked.messages.length).toBeGreaterThan(k);
      // The loopback's prefix cache works message by message (model + tools, then each message): the fork's first call
      // is credited with its whole prefix, rounded down to 128-token blocks.
      const pieces = [JSON.stringify({ model: forked.model, tools: forked.tools ?? [] }), ...forked.messages.slice(0, k).map((m) => JSON.stringify(m))];
      const prefixTokens = pieces.reduce((sum, piece) => sum + countTokens(piece, { disallowedSpecial: new Set<string>() }), 0);
      const replied = writerRecords.find((r) => r.type === 'model.replied')?.payload as { usage: { prompt: number; cached: number } } | undefined;
      expect(replied?.usage.cached).toBe(Math.floor(prefixTokens / 128) * 128);
      expect(replied?.usage.prompt).toBeGreaterThan(prefixTokens);
      const perf = events.find((e) => e.type === 'writer.cache_perf' && e.writer_id === writerId);
      expect(perf).toMatchObject({ status: 'completed', num_llm_calls: 3 });
      expect(perf?.type === 'writer.cache_perf' ? perf.cache_hit_rate : 0).toBeGreaterThan(0.6);
    }
    // The writers after the rebuild forked from the rewritten bytes (system + rebuilt context + pi's later messages).
    expect(sources.map((i) => i >= rewrittenFrom)).toEqual([false, false, false, true, true, true, true]);

    const verified = verifySession(log, SESSION);
    expect(verified.divergence).toBeNull();
    expect(verified.writers).toBe(settled.length);
  });
});
