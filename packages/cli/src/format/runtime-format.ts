import type { Lineage, RuntimeSession, RuntimeSessionsReply, RuntimeStatusReply, SessionOutcome } from '@baton/protocol';
import { groupDigits, percent, shortWriterId } from './numbers.ts';

/** `3 723 000` ms → `1h 02m 03s`; days above a day, seconds below an hour. */
export function duration(ms: number): string {
  const s = Math.floor(ms / 1000);
  const d = Math.floor(s / 86_400);
  const h = Math.floor((s % 86_400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  const two = (n: number): string => String(n).padStart(2, '0');
  if (d > 0) return `${d}d ${two(h)}h ${two(m)}m`;
  if (h > 0) return `${h}h ${two(m)}m ${two(sec)}s`;
  if (m > 0) return `${m}m ${two(sec)}s`;
  return `${sec}s`;
}

/** `84 213 760 bytes (80.3 MiB)`: exact, grouped, with a binary size beside it from 1 KiB. */
export function byteSize(bytes: number): string {
  const units = ['KiB', 'MiB', 'GiB', 'TiB'] as const;
  let value = bytes;
  let unit = '';
  for (const u of units) {
    if (value < 1024) break;
    value /= 1024;
    unit = u;
  }
  return `${groupDigits(bytes)} bytes${unit === '' ? '' : ` (${value.toFixed(1)} ${unit})`}`;
}

const plural = (n: number, word: string): string => `${groupDigits(n)} ${word}${n === 1 ? '' : 's'}`;

/** The readable `baton status` block: one line per subject, figures an older daemon does not send left out. */
export function statusBlock(r: RuntimeStatusReply, url: string): string[] {
  const sessions = [`${groupDigits(r.sessions)} resident`];
  if (r.sessions_total !== undefined) sessions.push(`${groupDigits(r.sessions_total)} in the log`);
  if (r.quarantined !== undefined) sessions.push(`${groupDigits(r.quarantined)} quarantined`);
  const pool = [plural(r.pool.threads, 'thread')];
  if (r.pool.utilization !== undefined) pool.push(`${percent(r.pool.utilization)} busy`);
  if (r.pool.worker_exits !== undefined && r.pool.worker_exits > 0) pool.push(`${plural(r.pool.worker_exits, 'worker exit')} (replaced)`);
  const log = [plural(r.log.streams, 'stream')];
  if (r.log.records !== undefined) log.push(plural(r.log.records, 'record'));
  if (r.log_bytes !== undefined) log.push(byteSize(r.log_bytes));
  const lines = [
    ['daemon', `${r.daemon_id} · up ${duration(r.uptime_ms)} · ${url}`],
    ...(r.serving === false ? [['serving', notServingText(r.not_serving)]] : []),
    ['sessions', sessions.join(' · ')],
    ['writers', `${groupDigits(r.writers.running)} running · ${groupDigits(r.writers.queued)} queued`],
    ['pool', pool.join(' · ')],
    ...(r.pool.workers ?? []).map((w) => [
      `  #${w.host}`,
      `${w.thread_id === null ? 'starting' : `thread ${w.thread_id}`} · ${percent(w.utilization)} busy · ${plural(w.sessions, 'session')} · ${plural(w.pending_calls, 'call')} waiting`,
    ]),
    ...(r.rss_bytes !== undefined ? [['memory', `${byteSize(r.rss_bytes)} resident (RSS)`]] : []),
    ['log', log.join(' · ')],
    ...(r.cluster !== undefined ? [['cluster', clusterText(r.cluster)]] : []),
  ];
  return lines.map(([label, text]) => `${(label ?? '').padEnd(9)} ${text ?? ''}`);
}

/** `NO — no_quorum: JetStream did not answer … (attempt 4)`. */
function notServingText(n: RuntimeStatusReply['not_serving']): string {
  if (n === undefined) return 'NO';
  return `NO — ${n.reason}: ${n.message}${n.attempts !== undefined && n.attempts > 0 ? ` (${plural(n.attempts, 'attempt')} so far)` : ''}`;
}

/** `replicated · lease 15s · holds 12 · heartbeat 0.4 s ago · 3 daemons (1 stale)`, and `paused` when it is. */
function clusterText(c: NonNullable<RuntimeStatusReply['cluster']>): string {
  const stale = c.daemons.filter((d) => d.stale).length;
  const parts = [
    c.durability,
    `lease ${duration(c.lease_ms)}`,
    `holds ${groupDigits(c.sessions_held)}`,
    c.heartbeat_age_ms === null ? 'no heartbeat yet' : `heartbeat ${(c.heartbeat_age_ms / 1000).toFixed(1)} s ago`,
    `${plural(c.daemons.length, 'daemon')}${stale > 0 ? ` (${stale} stale)` : ''}`,
  ];
  if (c.paused) parts.push('paused: cannot reach the cluster bucket');
  return parts.join(' · ');
}

/** `success …-w1`, `failure/transient …-w2`; `–` when no writer settled, `?` when the log does not say. */
function outcomeCell(o: SessionOutcome | null | undefined, sessionId: string): string {
  if (o === undefined) return '?';
  if (o === null) return '–';
  const kind = o.failure !== undefined && o.failure.kind !== o.outcome ? `/${o.failure.kind}` : '';
  return `${o.outcome}${kind} ${shortWriterId(o.writer_id, sessionId)}`;
}

const yesNo = (b: boolean): string => (b ? 'yes' : 'no');

interface Column {
  readonly title: string;
  readonly right?: boolean;
  readonly cell: (s: RuntimeSession) => string;
}

const COLUMNS: readonly Column[] = [
  { title: 'SESSION', cell: (s) => s.session_id },
  { title: 'PROJECT', cell: (s) => s.project_id ?? '?' },
  { title: 'RESIDENT', cell: (s) => (s.quarantined ? 'quarantined' : yesNo(s.resident)) },
  { title: 'TOKENS', right: true, cell: (s) => (s.state === null ? '–' : groupDigits(s.state.tokens)) },
  { title: 'WINDOW', right: true, cell: (s) => (s.state === null ? '–' : groupDigits(s.state.usable_window)) },
  { title: 'WATERMARK', cell: (s) => s.state?.watermark ?? '–' },
  { title: 'WRITER', cell: (s) => s.state?.writer ?? '–' },
  { title: 'OVERFLOW', cell: (s) => (s.state === null ? '–' : yesNo(s.state.overflow)) },
  // What the provider counted for the newest request, and how many requests it counted above the model's window (or
  // refused as too long): Baton fits what it sends, so anything but 0 there is a fault to look into.
  { title: 'LAST SENT', right: true, cell: (s) => (s.state?.last_prompt_tokens === undefined ? '–' : groupDigits(s.state.last_prompt_tokens)) },
  { title: 'TOO LONG', right: true, cell: (s) => (s.state === null ? '–' : String(s.state.over_window ?? 0)) },
  { title: 'CLOSED', cell: (s) => yesNo(s.closed) },
  { title: 'LAST WRITER', cell: (s) => outcomeCell(s.last_outcome, s.session_id) },
];


/** Rows of cells in aligned columns, two spaces apart, trailing blanks trimmed. */
function align(rows: readonly (readonly string[])[], right: readonly boolean[]): string[] {
  const widths = right.map((_r, i) => Math.max(...rows.map((row) => [...(row[i] ?? '')].length)));
  return rows.map((row) =>
    row
      .map((cell, i) => {
        const pad = (widths[i] ?? 0) - [...cell].length;
        return right[i] === true ? ' '.repeat(pad) + cell : cell + ' '.repeat(pad);
      })
      .join('  ')
      .trimEnd(),
  );
}

/** Where a session came from: `↳ <id> continues <from> (<kind>, from checkpoint v<n> up to <message>)`. */
export function lineageLine(sessionId: string, lineage: Lineage): string {
  const start = lineage.checkpoint_version === null ? 'no checkpoint to start from' : `from checkpoint v${lineage.checkpoint_version}${lineage.watermark === null ? '' : ` up to ${lineage.watermark}`}`;
  return `↳ ${sessionId} continues ${lineage.from_session} (${lineage.kind}, ${start})`;
}

/**
 * The readable `baton sessions` output: an aligned table (one row per session; `–` where a session has no recorded
 * state yet), the sessions whose log could not be read with the reason, and a count with how to see the next page.
 */
export function sessionsTable(reply: Pick<RuntimeSessionsReply, 'sessions' | 'next'>): string[] {
  const { sessions, next } = reply;
  if (sessions.length === 0) return ['no sessions'];
  const lines = align(
    [COLUMNS.map((c) => c.title), ...sessions.map((s) => COLUMNS.map((c) => c.cell(s)))],
    COLUMNS.map((c) => c.right === true),
  );
  for (const s of sessions) if (s.error !== undefined) lines.push(`! ${s.session_id}: ${s.error}`);
  for (const s of sessions) {
    const over = s.state?.over_window ?? 0;
    if (over > 0) lines.push(`! ${s.session_id}: ${plural(over, 'request')} did not fit the model's window (the provider counted more or refused)`);
    if (s.recording === 'stalled') lines.push(`! ${s.session_id}: recording stalled: the gateway could not record its latest calls; its next call sends them again`);
  }
  for (const s of sessions) if (s.lineage !== undefined) lines.push(lineageLine(s.session_id, s.lineage));
  for (const s of sessions) if (s.successors !== undefined) lines.push(`↳ ${s.session_id} continued by ${s.successors.map((x) => `${x.session_id} (${x.kind})`).join(', ')}`);
  const count = plural(sessions.length, 'session');
  lines.push(next === undefined ? count : `${count} listed; more follow: baton sessions --after ${next}`);
  return lines;
}
