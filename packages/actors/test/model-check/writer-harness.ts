/**
 * Model-checking harness for the writer machine: every kind of effect result the runtime can feed back (including
 * ones that do not fit the current phase), a context abstraction, per-state invariants and a per-path monitor.
 */
import type { SnapshotFrom } from 'xstate';
import type { FailureKind } from '@baton/protocol';
import type { Failure } from '../../src/session-events.ts';
import type { WriterEffect } from '../../src/writer-effects.ts';
import type { WriterEvent, WriterInput } from '../../src/writer-events.ts';
import { writerMachine } from '../../src/writer-machine.ts';
import type { Checks, Labelled } from './graph-harness.ts';
import { MachineStepper } from './machine-stepper.ts';

export type WriterSnapshot = SnapshotFrom<typeof writerMachine>;

export const WRITER_INPUT: WriterInput = { writerId: 's-w1', sessionId: 's', mode: 'fork', boundary: 'm3', maxReentries: 3, maxContinuations: 2 };

const usage = { prompt: 100, completion: 5, cached: 80 };
const reply = (content: string | null, reasoning: string | null, tools: number): WriterEvent => ({
  type: 'model.replied',
  content,
  reasoning,
  toolCalls: Array.from({ length: tools }, (_, i) => ({ id: `call${i}`, name: 'edit', arguments: '{}' })),
  finishReason: tools > 0 ? 'tool_calls' : 'stop',
  usage,
});

const FAILURES: Record<FailureKind, { failure: Failure; status: number | null }> = {
  transient: { failure: { kind: 'transient', retryable: true, message: '429 Too Many Requests' }, status: 429 },
  overflow: { failure: { kind: 'overflow', retryable: false, message: 'context length exceeded' }, status: 400 },
  auth: { failure: { kind: 'auth', retryable: false, message: 'unauthorized' }, status: 401 },
  validation: { failure: { kind: 'validation', retryable: false, message: 'bad request' }, status: 422 },
  cancelled: { failure: { kind: 'cancelled', retryable: false, message: 'aborted' }, status: null },
  internal: { failure: { kind: 'internal', retryable: false, message: 'the event log refused a record' }, status: null },
  other: { failure: { kind: 'other', retryable: false, message: 'boom' }, status: null },
};

/** Every writer event, whatever the phase: results that do not fit (duplicates, late ones) must change nothing. */
export const WRITER_EVENTS: readonly Labelled<WriterEvent>[] = [
  { label: 'prepared', event: { type: 'writer.prepared' } },
  { label: 'prepare_failed:skipped', event: { type: 'writer.prepare_failed', outcome: 'skipped', reason: 'no fork prefix' } },
  { label: 'prepare_failed:failure', event: { type: 'writer.prepare_failed', outcome: 'failure', reason: 'mkdir failed', failure: { kind: 'other', retryable: false } } },
  { label: 'reply:tools', event: reply(null, null, 2) },
  { label: 'reply:text', event: reply('CHECKPOINT_COMPLETE', null, 0) },
  { label: 'reply:empty', event: reply('', null, 0) },
  { label: 'reply:blank', event: reply('  \n', null, 0) },
  { label: 'reply:reasoning-only', event: reply(null, 'thinking about the checkpoint', 0) },
  ...(Object.keys(FAILURES) as FailureKind[]).map((k) => ({ label: `model.failed:${k}`, event: { type: 'model.failed' as const, ...FAILURES[k] } })),
  { label: 'tools.completed', event: { type: 'tools.completed', results: [{ id: 'call0', name: 'edit', ok: true, output: 'ok' }] } },
  { label: 'validation:clean', event: { type: 'validation.completed', errors: [], extract: [], warnings: [] } },
  { label: 'validation:errors', event: { type: 'validation.completed', errors: ['§3 header missing'], extract: [], warnings: [] } },
  { label: 'validation:extract', event: { type: 'validation.completed', errors: [], extract: ['§5 over budget'], warnings: [] } },
  { label: 'validation:both', event: { type: 'validation.completed', errors: ['§3 header missing'], extract: ['§5 over budget'], warnings: [] } },
  { label: 'validation:warnings', event: { type: 'validation.completed', errors: [], extract: [], warnings: ['entry without Why:'] } },
  // The writer left its draft as it was after a reflection: no further re-entry, whatever is left of the limit.
  {
    label: 'validation:unchanged',
    event: { type: 'validation.completed', errors: ['§1 has no block quote'], extract: [], warnings: [], rules: ['checkpoint-intent-unquoted'], unchanged: true },
  },
  { label: 'commit.completed', event: { type: 'commit.completed', files: [{ path: 'checkpoint.md', hash: 'h1' }] } },
  { label: 'commit.failed', event: { type: 'commit.failed', message: 'rename failed' } },
  { label: 'cancel', event: { type: 'writer.cancel', reason: 'drain' } },
];

export const writerEvents = (): Labelled<WriterEvent>[] => [...WRITER_EVENTS];

/** Phase, counters that are bounded by the limits, LLM calls capped, and the outcome. */
export function abstractWriter(snapshot: WriterSnapshot): string {
  const c = snapshot.context;
  return JSON.stringify([snapshot.value, c.phase, c.reentries, c.continuations, Math.min(c.calls, 4), c.outcome, c.failure?.kind ?? null]);
}

const byLabel = (label: string): WriterEvent => {
  const found = WRITER_EVENTS.find((l) => l.label === label);
  if (found === undefined) throw new Error(`no writer event ${label}`);
  return found.event;
};

/** Results that fit each phase, most likely first: a run driven by them goes through tools, reminders and re-entries. */
const FITTING: Readonly<Record<WriterSnapshot['context']['phase'], readonly string[]>> = {
  preparing: ['prepared', 'prepared', 'prepared', 'prepare_failed:skipped'],
  calling: ['reply:tools', 'reply:tools', 'reply:text', 'reply:text', 'reply:empty', 'reply:reasoning-only', 'reply:blank', 'reply:text', 'reply:tools', 'model.failed:transient'],
  tools: ['tools.completed'],
  validating: ['validation:errors', 'validation:extract', 'validation:both', 'validation:errors', 'validation:extract', 'validation:clean', 'validation:warnings'],
  committing: ['commit.completed', 'commit.completed', 'commit.failed'],
  settled: ['cancel', 'reply:text'],
};

/** A result that fits the writer's phase; `pick` chooses one. */
export function fittingWriterEvent(snapshot: WriterSnapshot, pick: number): WriterEvent {
  const labels = FITTING[snapshot.context.phase];
  return byLabel(labels[pick % labels.length] ?? 'cancel');
}

/** Writer results of every kind with varied payloads, whatever the phase (duplicates, late ones). `pick` chooses one. */
export function writerNoise(pick: number): WriterEvent {
  const kinds = ['transient', 'overflow', 'auth', 'validation', 'cancelled', 'other'] as const;
  const kind = kinds[pick % kinds.length] ?? 'other';
  const n = pick % 4;
  const noise: WriterEvent[] = [
    { type: 'model.failed', failure: { kind, retryable: kind === 'transient' }, status: pick % 2 === 0 ? 500 : null },
    { type: 'model.replied', content: n === 0 ? null : 'x'.repeat(n - 1), reasoning: n === 1 ? 'r' : null, toolCalls: n === 3 ? [{ id: 'c', name: 'bash', arguments: '{}' }] : [], finishReason: null, usage: { prompt: pick, completion: 1, cached: pick % 7 } },
    { type: 'validation.completed', errors: n & 1 ? ['e'] : [], extract: n & 2 ? ['x'] : [], warnings: pick % 3 === 0 ? ['w'] : [] },
    { type: 'tools.completed', results: [] },
    { type: 'writer.prepare_failed', outcome: pick % 2 === 0 ? 'skipped' : 'failure', reason: 'noise' },
  ];
  return noise[pick % noise.length] as WriterEvent;
}

export function checkWriterState(snapshot: WriterSnapshot, check: Checks): void {
  const c = snapshot.context;
  check.that(snapshot.value === c.phase, `state ${String(snapshot.value)} disagrees with phase ${c.phase}`);
  check.that(c.reentries <= c.input.maxReentries && c.reentries <= 3, `${c.reentries} re-entries`);
  check.that(c.continuations <= c.input.maxContinuations && c.continuations <= 2, `${c.continuations} continuations`);
  check.that((c.phase === 'settled') === (c.outcome !== null), 'outcome and settled phase disagree');
  check.that((c.phase === 'settled') === (snapshot.status === 'done'), 'settled is not final');
  check.that(c.perf.calls <= c.calls, 'more replies than calls');
  if (c.outcome === 'success') check.that(c.failure === null, 'success with a failure');
  if (c.outcome === 'cancelled') check.that(c.failure?.kind === 'cancelled', 'cancelled without kind cancelled');
}

export class WriterMonitor {
  settles = 0;
  calls = 0;
  prompt = 0;
  cached = 0;
  replies = 0;
  reentries = 0;
  continuationsSinceEntry = 0;
  committed = false;
  quarantined = false;

  clone(): WriterMonitor {
    return Object.assign(new WriterMonitor(), this);
  }

  step(prev: WriterSnapshot, event: WriterEvent, effects: readonly WriterEffect[], next: WriterSnapshot, check: Checks): void {
    const p = prev.context;
    const n = next.context;
    if (p.phase === 'settled') {
      check.that(effects.length === 0 && next.status === 'done' && JSON.stringify(next.context) === JSON.stringify(prev.context), `${event.type} changed a settled writer`);
      return;
    }
    if (event.type === 'model.replied' && p.phase === 'calling') {
      this.replies++;
      this.prompt += event.usage.prompt;
      this.cached += event.usage.cached;
    }
    const settles = effects.filter((e) => e.kind === 'settle');
    check.that(settles.length <= 1, 'two settle effects in one step');
    for (const e of effects) {
      switch (e.kind) {
        case 'prepare':
          check.that(false, 'prepare after the start');
          break;
        case 'model.call':
          this.calls++;
          check.that(e.call === this.calls && n.calls === this.calls, `model call numbered ${e.call}, expected ${this.calls}`);
          check.that(e.nudge === null || e.nudge.kind !== 'continuation' || this.continuationsSinceEntry <= 2, 'too many continuations');
          if (e.nudge?.kind === 'validation') check.that(event.type === 'validation.completed' && event.errors.length > 0 && event.extract.length === 0, 'validation reflection without errors');
          if (e.nudge?.kind === 'extraction') check.that(event.type === 'validation.completed' && event.extract.length > 0, 'extraction reflection without an over-budget section');
          break;
        case 'reentered':
          if (e.reason === 'continuation') {
            this.continuationsSinceEntry++;
            check.that(this.continuationsSinceEntry <= 2 && e.iteration === this.continuationsSinceEntry, 'continuation limit exceeded');
          } else {
            this.reentries++;
            this.continuationsSinceEntry = 0;
            check.that(this.reentries <= 3 && e.iteration === this.reentries, `re-entry ${e.iteration} (limit 3)`);
          }
          break;
        case 'commit':
          check.that(p.phase === 'validating' && event.type === 'validation.completed' && event.errors.length === 0 && !this.committed, 'commit other than after a validation without errors');
          this.committed = true;
          break;
        case 'quarantine':
          check.that(
            event.type === 'validation.completed' && event.errors.length > 0 && (p.reentries === p.input.maxReentries || event.unchanged === true),
            'quarantine before the last re-entry (and not after a reflection left unanswered)',
          );
          this.quarantined = true;
          break;
        case 'settle':
          this.settles++;
          check.that(this.settles === 1, 'settled twice');
          check.that(n.phase === 'settled' && n.outcome === e.outcome, 'settle effect without the settled state');
          check.that(e.perf.calls === this.replies && e.perf.promptTokens === this.prompt && e.perf.cachedTokens === this.cached, 'cache_perf is not the sum of the writer’s own calls');
          if (e.outcome === 'success') check.that(this.committed && !this.quarantined && event.type === 'commit.completed', 'success without a commit');
          if (event.type === 'model.failed') check.that(e.outcome === 'failure' && JSON.stringify(e.failure) === JSON.stringify(event.failure), 'the model failure is not passed through');
          if (event.type === 'writer.cancel') check.that(e.outcome === 'cancelled', 'cancel did not settle as cancelled');
          if (this.quarantined) check.that(e.outcome === 'failure' && e.failure?.kind === 'validation', 'quarantined draft not settled as a validation failure');
          if (event.type === 'writer.prepare_failed') check.that(e.outcome === event.outcome, 'prepare failure settled with another outcome');
          break;
        case 'tools.run':
        case 'validate':
          // Checked by the state invariants (they only follow a reply with tool calls, or with text).
          break;
      }
    }
    if (next.context.phase === 'settled') check.that(this.settles === 1, 'settled without a settle effect');
    // Events that do not fit the phase change nothing.
    const fits =
      event.type === 'writer.cancel' ||
      (p.phase === 'preparing' && (event.type === 'writer.prepared' || event.type === 'writer.prepare_failed')) ||
      (p.phase === 'calling' && (event.type === 'model.replied' || event.type === 'model.failed')) ||
      (p.phase === 'tools' && event.type === 'tools.completed') ||
      (p.phase === 'validating' && event.type === 'validation.completed') ||
      (p.phase === 'committing' && (event.type === 'commit.completed' || event.type === 'commit.failed'));
    if (!fits) check.that(effects.length === 0 && JSON.stringify(n) === JSON.stringify(p), `${event.type} in phase ${p.phase} changed something`);
  }
}

/** A memoising stepper for the writer machine (same contract as the session one). */
export class WriterStepper extends MachineStepper<typeof writerMachine, WriterSnapshot, WriterEvent, WriterEffect> {
  constructor() {
    super(writerMachine);
  }
}
