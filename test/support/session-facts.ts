import type { BatonClient } from '@baton/client';
import type { EventLog } from '@baton/log-schema';

/** What a daemon session's event log says happened: inputs, the events its decisions published, its writers and rebuilds. */
export interface SessionFacts {
  /** The session's input records (not its decisions and snapshots), in order. */
  readonly inputs: readonly { readonly type: string; readonly payload: unknown }[];
  /** The events its decisions published, in order. */
  readonly published: readonly ({ readonly type: string } & Record<string, unknown>)[];
  /** The rungs crossed, in order. */
  readonly thresholds: readonly unknown[];
  /** `[mode, trigger]` of each writer started, in order. */
  readonly writersStarted: readonly (readonly [unknown, unknown])[];
  readonly settled: readonly { readonly writerId: string; readonly outcome: string }[];
  /** The reason of each rebuild asked for, in order. */
  readonly rebuildReasons: readonly string[];
  /** The outcome of each rebuild completed, in order. */
  readonly rebuildOutcomes: readonly unknown[];
}

export function sessionFacts(log: EventLog, sid: string): SessionFacts {
  const records = [...log.read(`session/${sid}`)];
  const inputs = records.filter((r) => r.type !== 'decision' && r.type !== 'snapshot');
  const published = records
    .flatMap((r) => (r.type === 'decision' ? (r.payload as { effects: { kind: string; event?: { type: string } & Record<string, unknown> }[] }).effects : []))
    .flatMap((e) => (e.kind === 'publish' && e.event !== undefined ? [e.event] : []));
  return {
    inputs,
    published,
    thresholds: published.filter((e) => e.type === 'threshold.crossed').map((e) => e['threshold']),
    writersStarted: published.filter((e) => e.type === 'writer.started').map((e) => [e['mode'], e['trigger']] as const),
    settled: inputs.filter((r) => r.type === 'writer.settled').map((r) => r.payload as { writerId: string; outcome: string }),
    rebuildReasons: inputs.filter((r) => r.type === 'rebuild.requested').map((r) => (r.payload as { reason: string }).reason),
    rebuildOutcomes: published.filter((e) => e.type === 'rebuild.completed').map((e) => e['outcome']),
  };
}

/** A writer's own records: how it started (mode, prefix length) and the usage of each model call. */
export interface WriterFacts {
  readonly mode: string | undefined;
  readonly prefixMessages: number;
  readonly usage: readonly { readonly prompt: number; readonly cached: number }[];
}

export function writerFacts(log: EventLog, writerId: string): WriterFacts {
  const records = [...log.read(`writer/${writerId}`)];
  const started = records.find((r) => r.type === 'writer.started')?.payload as { input: { mode: string }; prefixMessages: number } | undefined;
  return {
    mode: started?.input.mode,
    prefixMessages: started?.prefixMessages ?? 0,
    usage: records.filter((r) => r.type === 'model.replied').map((r) => (r.payload as { usage: { prompt: number; cached: number } }).usage),
  };
}

/** Waits until session `sid` has no writer running or queued (or is not open yet), polling its status. */
export async function writersIdle(client: BatonClient, sid: string, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const status = await client.status(sid).catch(() => null);
    if (status === null || status.state.writer === 'idle') return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`a writer of ${sid} did not settle within ${ms} ms`);
}
