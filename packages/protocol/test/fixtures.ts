import type { PublishedEvent } from '../src/events.ts';
import type {
  AppendReply,
  OpenReply,
  RebuildReply,
  RuntimeStatusReply,
  SessionState,
  StatusReply,
} from '../src/replies.ts';

/** Typical wire values, shared by the schema and codec tests. */
export const AT = 1_733_000_000_123;

export const state: SessionState = {
  tokens: 52_000,
  usable_window: 115_000,
  next_threshold: 69_000,
  watermark: 'm41',
  writer: 'running+pending',
  overflow: false,
};

export const openReply: OpenReply = {
  ok: true,
  session_id: 'sess-1',
  resumed: false,
  memory: {
    root: '/data/memory',
    checkpoint: '/data/memory/sessions/sess-1/checkpoint.md',
    memory: '/data/memory/projects/p/MEMORY.md',
    notes: '/data/memory/sessions/sess-1/notes.md',
    tasks_dir: '/data/memory/sessions/sess-1/tasks',
  },
  thresholds: [23_000, 46_000, 69_000, 92_000],
  usable_window: 115_000,
};

export const appendReply: AppendReply = { ok: true, accepted: 3, duplicates: 1, state };

export const rebuildReply: RebuildReply = {
  ok: true,
  outcome: 'rebuilt',
  covered_up_to: 'm41',
  context: [
    { id: 'baton-boundary-1', role: 'user', content: '# Checkpoint\n…' },
    { id: 'm42', role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'x', arguments: '{}' } }] },
  ],
  status_text: '',
};

export const statusReply: StatusReply = {
  ok: true,
  state,
  files: {
    checkpoint: { exists: true, tokens: 4_200, version: 3 },
    memory: { exists: true, tokens: 900, version: 1 },
    notes: { exists: false, tokens: 0, version: 0 },
  },
  writer: { id: 'w7', started_at: AT, covers_up_to: 'm50', mode: 'fork', turn: 2, reentries: 1 },
  last_outcome: { writer_id: 'w6', outcome: 'failure', failure: { kind: 'transient', retryable: true }, watermark: 'm41', at: AT },
};

export const runtimeStatusReply: RuntimeStatusReply = {
  ok: true,
  daemon_id: 'd-1',
  uptime_ms: 86_400_000,
  sessions: 2,
  writers: { running: 1, queued: 0 },
  pool: { threads: 2, utilization: 0.25 },
  log: { streams: 5, records: 1_234 },
};

const base = { session_id: 'sess-1', at: AT };

export const events: PublishedEvent[] = [
  { ...base, type: 'threshold.crossed', threshold: 23_000, tokens: 24_100 },
  { ...base, type: 'writer.started', writer_id: 'w1', covers_up_to: 'm9', mode: 'delta', trigger: 'threshold', reason: 'no write tool' },
  { ...base, type: 'writer.queued' },
  { ...base, type: 'writer.reentered', writer_id: 'w1', iteration: 1, kind: 'validation' },
  { ...base, type: 'writer.settled', writer_id: 'w1', outcome: 'success', watermark: 'm9' },
  { ...base, type: 'writer.settled', writer_id: 'w2', outcome: 'failure', failure: { kind: 'auth', retryable: false }, watermark: null },
  {
    ...base,
    type: 'writer.cache_perf',
    writer_id: 'w1',
    status: 'success',
    total_input_tokens: 40_000,
    cache_read_tokens: 36_000,
    cache_write_tokens: 2_000,
    cache_hit_rate: 0.9,
    num_llm_calls: 3,
  },
  { ...base, type: 'status', text: 'Writing checkpoint…' },
  { ...base, type: 'status', text: '' },
  { ...base, type: 'rebuild.completed', outcome: 'compacted', covered_up_to: null },
];

/** Every typical reply and event, for round-trip tests. */
export const typicalPayloads: readonly unknown[] = [
  openReply,
  appendReply,
  rebuildReply,
  statusReply,
  runtimeStatusReply,
  { ok: true, count: 4 },
  { ok: true, result: 'skipped', reason: 'checkpoint disabled' },
  { ok: true },
  { ok: true, drained: 1, timed_out: 0, dropped: 2 },
  { ok: false, error: { code: 'bad_request', message: 'invalid', details: [{ path: 'messages.0.role', message: 'x' }] } },
  ...events,
];
