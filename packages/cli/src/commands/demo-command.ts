import { mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileVersions } from '@baton/memory-store';
import { BatonClient, MemoryTransport, type SessionEventStream } from '@baton/client';
import { BatonDaemon, EventLogCommitJournal, LmdbEventLog } from '@baton/runtime';
import { type Message } from '@baton/protocol';
import { startLoopbackModel, type LoopbackModel } from '@baton/testing';
import type { CliIo } from '../cli-io.ts';
import { EXIT } from '../exit-codes.ts';
import { sectionExcerpt } from '../demo/checkpoint-excerpt.ts';
import { AgentHistory } from '../demo/agent-history.ts';
import { DemoNarrator } from '../demo/demo-narrator.ts';
import { rebuildReportLines } from '../demo/rebuild-report.ts';
import { agentTurns, loadRecordedSession } from '../demo/recorded-session.ts';
import { excerpt, groupDigits } from '../format/numbers.ts';

export interface DemoOptions {
  readonly dataDir: string;
  readonly poolSize: number;
}

/** The recording is compressed (a long session in ~90 messages), so the preserved tail is scaled down to match. */
export const DEMO_TAIL_POLICY = { minTokens: 1500, maxTokens: 4000, minTextMessages: 3 } as const;
const MODEL_LATENCY_MS = 20;
const WRITER_WAIT_MS = 60_000;
const POLL_MS = 25;

function quoted(arg: string): string {
  return /^[\w./@:-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", `'\\''`)}'`;
}

function turnLine(turn: readonly Message[], tokens: number): string {
  const [first] = turn;
  if (first === undefined) return '';
  let text: string;
  if (first.role === 'assistant') {
    const tools = (first.tool_calls ?? []).map((c) => {
      const name = (c as { function?: { name?: unknown } }).function?.name;
      return typeof name === 'string' ? name : name === undefined || name === null ? '?' : JSON.stringify(name);
    });
    const said = typeof first.content === 'string' && first.content.trim() !== '' ? ` "${excerpt(first.content, 60)}"` : '';
    text = tools.length > 0 ? `${first.id} assistant → ${tools.join(', ')}${turn.length > 1 ? ` (+${turn.length - 1} result${turn.length > 2 ? 's' : ''})` : ''}${said}` : `${first.id} assistant${said}`;
  } else {
    text = `${first.id} ${first.role} "${excerpt(typeof first.content === 'string' ? first.content : JSON.stringify(first.content), 70)}"`;
  }
  return `  · ${text}  [${groupDigits(tokens)} tokens]`;
}

async function sleep(ms: number): Promise<void> {
  await new Promise((r) => setTimeout(r, ms));
}

/**
 * `baton demo`: everything embedded (in-memory transport, LMDB log in `<data>/events`, the loopback model in
 * extractive mode, a daemon and a client in this process). Replays the recorded coding session one agent turn at a
 * time, waiting for each writer to settle so the output reads as a story. When an append reports an overflow, it
 * asks for a rebuild, prints what came back and, being the agent, continues from the rebuilt context. Finally it
 * prints the checkpoint and the replay (and memory history) commands. Everything is closed before it returns.
 */
export async function runDemo(options: DemoOptions, io: CliIo): Promise<number> {
  const started = Date.now();
  const recording = loadRecordedSession();
  const turns = agentTurns(recording.messages);
  const dataDir = resolve(options.dataDir);
  mkdirSync(join(dataDir, 'events'), { recursive: true });

  let model: LoopbackModel | null = null;
  let transport: MemoryTransport | null = null;
  let log: LmdbEventLog | null = null;
  let daemon: BatonDaemon | null = null;
  let events: SessionEventStream | null = null;
  try {
    model = await startLoopbackModel({ mode: 'extractive', latencyMs: MODEL_LATENCY_MS });
    transport = new MemoryTransport();
    log = LmdbEventLog.open({ path: join(dataDir, 'events') });
    daemon = BatonDaemon.start({
      transport,
      log,
      dataDir,
      poolSize: options.poolSize,
      model: { baseURL: model.baseURL, apiKey: 'loopback' },
      tail: DEMO_TAIL_POLICY,
      logger: (level, msg, data) => {
        if (level === 'warn' || level === 'error') io.err(`[daemon ${level}] ${msg}${data !== undefined ? ` ${JSON.stringify(data)}` : ''}`);
      },
    });
    const client = new BatonClient(transport);

    io.out('Baton demo — fully embedded: in-memory transport, LMDB event log, loopback model (extractive), no network.');
    io.out(`  data dir ${dataDir} · worker pool ${options.poolSize} · model latency ${MODEL_LATENCY_MS} ms`);
    io.out(
      `  tail policy scaled down for the compressed recording: minTokens ${groupDigits(DEMO_TAIL_POLICY.minTokens)}, ` +
        `maxTokens ${groupDigits(DEMO_TAIL_POLICY.maxTokens)}, minTextMessages ${DEMO_TAIL_POLICY.minTextMessages} (daemon defaults 10 000 / 20 000 / 5)`,
    );
    const opened = await client.open(recording.open);
    const sid = opened.session_id;
    io.out(
      `Replaying the recorded session of project ${recording.open.project_id}: ${recording.messages.length} messages in ${turns.length} agent turns, ` +
        `model ${recording.open.model.id}, usable window ${groupDigits(opened.usable_window)}, thresholds ${opened.thresholds.map(groupDigits).join(' · ')}`,
    );
    io.out(`Session ${sid}`);
    io.out('');

    // Lines of events that arrive while a turn is being appended are held until the turn's own line is printed.
    let held: string[] | null = null;
    const narrator = new DemoNarrator(sid, (line) => (held === null ? io.out(line) : held.push(line)));
    const stream = client.events(sid);
    events = stream;
    const pump = (async () => {
      for await (const event of stream) narrator.handle(event);
    })();

    const waitForIdleWriter = async (): Promise<void> => {
      const deadline = Date.now() + WRITER_WAIT_MS;
      for (;;) {
        const status = await client.status(sid);
        if (status.state.writer === 'idle') break;
        if (Date.now() > deadline) throw new Error(`the writer did not settle within ${WRITER_WAIT_MS / 1000} s`);
        await sleep(POLL_MS);
      }
      // The settlement event was published before the slot freed; let the narrator print it before going on.
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([narrator.whenWritersSettled(), new Promise((r) => (timer = setTimeout(r, 5_000)))]);
      clearTimeout(timer);
    };

    // Prints `first` lines, then the narrator's lines held since `held = []` (events arrive around a reply).
    const release = async (first: readonly string[]): Promise<void> => {
      await new Promise((r) => setImmediate(r));
      const lines: string[] = held ?? [];
      held = null;
      for (const line of [...first, ...lines]) io.out(line);
    };

    // The demo is the agent: it keeps its own history, and replaces it with the rebuilt context on overflow.
    const history = new AgentHistory(recording.open.system, recording.open.tools);
    let rebuilds = 0;
    for (const turn of turns) {
      held = [];
      const sent = history.take(turn);
      const reply = await client.append(sid, sent);
      await release([turnLine(sent, reply.state.tokens)]);
      if (reply.state.writer !== 'idle' || narrator.openWriters > 0) await waitForIdleWriter();
      if (!reply.state.overflow) continue;

      io.out(`⚠ overflow: ${groupDigits(reply.state.tokens)} tokens, past the usable window of ${groupDigits(reply.state.usable_window)} — the agent asks for a rebuild`);
      held = [];
      const before = { messages: history.length, tokens: history.promptTokens };
      const rebuilt = await client.rebuild(sid, { reason: 'overflow' });
      rebuilds++;
      if (rebuilt.context.length > 0) history.replace(rebuilt.context);
      await release([
        ...rebuildReportLines(rebuilt),
        `  the agent's history is now the rebuilt context: ${before.messages} → ${history.length} messages, ` +
          `${groupDigits(before.tokens)} → ${groupDigits(history.promptTokens)} prompt tokens with the system prompt and tools; ` +
          'later turns report usage over it',
      ]);
    }
    await waitForIdleWriter();
    await client.close(sid);

    io.out('');
    io.out(
      `Done in ${((Date.now() - started) / 1000).toFixed(1)} s: ${narrator.crossings} threshold crossings, ` +
        `${narrator.settled} writers settled (${narrator.successes} successful), ${rebuilds} rebuild${rebuilds === 1 ? '' : 's'}.`,
    );
    const checkpoint = opened.memory.checkpoint;
    io.out(`Checkpoint: ${checkpoint}`);
    const text = (() => {
      try {
        return readFileSync(checkpoint, 'utf8');
      } catch {
        return null;
      }
    })();
    if (text === null) {
      io.out('  (no checkpoint was written)');
    } else {
      const section = sectionExcerpt(text, '§1', 6);
      io.out(`  ${section.heading ?? '§1'}:`);
      for (const line of section.lines) io.out(`  │ ${excerpt(line, 160)}`);
    }
    io.out(`Session id: ${sid}`);
    io.out('Replay it from the event log:');
    io.out(`  npx baton replay ${sid} --data-dir ${quoted(options.dataDir)}`);
    io.out(`  npx baton replay ${sid} --data-dir ${quoted(options.dataDir)} --verify`);
    const versions = await fileVersions(new EventLogCommitJournal(log), `sessions/${sid}/checkpoint.md`);
    if (versions.length > 0) {
      io.out(`Every committed version of the checkpoint is kept (${versions.length} here):`);
      io.out(`  npx baton memory log ${sid} --data-dir ${quoted(options.dataDir)}`);
      io.out(`  npx baton memory diff ${sid} 1 --data-dir ${quoted(options.dataDir)}`);
    }
    stream.stop();
    await pump;
    return EXIT.ok;
  } finally {
    events?.stop();
    await daemon?.stop();
    await log?.close();
    await transport?.close();
    await model?.close();
  }
}
