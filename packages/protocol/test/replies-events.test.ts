import { describe, expect, it } from 'vitest';
import { PublishedEventSchema } from '../src/events.ts';
import {
  AppendReplySchema,
  CheckpointReplySchema,
  CloseReplySchema,
  OpenReplySchema,
  RebuildReplySchema,
  RuntimeDrainReplySchema,
  RuntimeStatusReplySchema,
  StatusReplySchema,
  TasksReplySchema,
} from '../src/replies.ts';
import { appendReply, AT, events, openReply, rebuildReply, runtimeStatusReply, statusReply } from './fixtures.ts';

describe('reply schemas', () => {
  it.each([
    ['open', OpenReplySchema, openReply],
    ['append', AppendReplySchema, appendReply],
    ['tasks', TasksReplySchema, { ok: true, count: 0 }],
    ['checkpoint', CheckpointReplySchema, { ok: true, result: 'started' }],
    ['rebuild', RebuildReplySchema, rebuildReply],
    ['status', StatusReplySchema, statusReply],
    ['status while idle', StatusReplySchema, { ...statusReply, writer: null, last_outcome: null }],
    ['close', CloseReplySchema, { ok: true }],
    ['runtime.status', RuntimeStatusReplySchema, runtimeStatusReply],
    ['runtime.status without optional figures', RuntimeStatusReplySchema, { ...runtimeStatusReply, pool: { threads: 1 }, log: { streams: 0 } }],
    ['runtime.drain', RuntimeDrainReplySchema, { ok: true, drained: 0, timed_out: 1, dropped: 0 }],
  ])('accepts a typical %s reply', (_name, schema, value) => {
    expect(schema.parse(value)).toEqual(value);
  });

  it('drops unknown reply fields instead of refusing them (newer daemons may say more)', () => {
    expect(TasksReplySchema.parse({ ok: true, count: 1, took_ms: 3 })).toEqual({ ok: true, count: 1 });
  });

  it.each([
    ['ok false', TasksReplySchema, { ok: false, count: 1 }],
    ['bad writer slot', AppendReplySchema, { ...appendReply, state: { ...appendReply.state, writer: 'busy' } }],
    ['bad rebuild outcome', RebuildReplySchema, { ...rebuildReply, outcome: 'done' }],
    ['utilization above 1', RuntimeStatusReplySchema, { ...runtimeStatusReply, pool: { threads: 2, utilization: 1.5 } }],
    ['thresholds not ints', OpenReplySchema, { ...openReply, thresholds: [0.2] }],
  ])('rejects %s', (_name, schema, value) => {
    expect(schema.safeParse(value).success).toBe(false);
  });
});

describe('session events', () => {
  it.each(events.map((e) => [e.type, e] as const))('accepts a typical %s event', (_type, event) => {
    expect(PublishedEventSchema.parse(event)).toEqual(event);
  });

  it('narrows on type', () => {
    const event = PublishedEventSchema.parse({ type: 'threshold.crossed', session_id: 's', at: AT, threshold: 1, tokens: 2 });
    expect(event.type === 'threshold.crossed' ? event.threshold : -1).toBe(1);
  });

  it.each([
    ['unknown type', { type: 'writer.exploded', session_id: 's', at: AT }],
    ['missing session id', { type: 'writer.queued', at: AT }],
    ['fractional time', { type: 'writer.queued', session_id: 's', at: 1.5 }],
    ['bad reentry kind', { type: 'writer.reentered', session_id: 's', at: AT, writer_id: 'w', iteration: 1, kind: 'retry' }],
    ['bad failure kind', { type: 'writer.settled', session_id: 's', at: AT, writer_id: 'w', outcome: 'failure', failure: { kind: 'x', retryable: true }, watermark: null }],
    ['status without text', { type: 'status', session_id: 's', at: AT }],
  ])('rejects %s', (_name, value) => {
    expect(PublishedEventSchema.safeParse(value).success).toBe(false);
  });
});
