import { describe, expect, it } from 'vitest';
import { decodeReply, encodeReply } from '../src/codec.ts';
import { RuntimeSessionsReplySchema, RuntimeSessionSchema, RuntimeStatusReplySchema, type RuntimeSession, type RuntimeSessionsReply } from '../src/replies.ts';
import { MAX_SESSIONS_PAGE, RuntimeSessionsRequestSchema } from '../src/requests.ts';
import { subjects } from '../src/subjects.ts';
import { AT, runtimeStatusReply, state } from './fixtures.ts';

/*
 * `runtime.sessions` and the figures `runtime.status` gained: both additive to v1. A reply of an older daemon still
 * parses, new replies keep every field, and the new request is as strict as every request Baton defines.
 */

const resident: RuntimeSession = {
  session_id: 'sess-1',
  project_id: 'repo',
  model: 'gpt-4o',
  opened_at: AT,
  resident: true,
  quarantined: false,
  state,
  closed: false,
  last_outcome: { writer_id: 'sess-1-w1', outcome: 'failure', failure: { kind: 'transient', retryable: true }, reason: 'rate limited' },
};

const setupOnly: RuntimeSession = {
  session_id: 'sess-2',
  project_id: 'repo',
  model: 'gpt-4o',
  opened_at: AT,
  resident: false,
  quarantined: false,
  state: null,
  closed: false,
  last_outcome: null,
};

const quarantined: RuntimeSession = {
  session_id: 'sess-3',
  project_id: null,
  model: null,
  opened_at: null,
  resident: false,
  quarantined: true,
  state: null,
  closed: false,
  error: 'session sess-3 is quarantined: session/sess-3 seq 1 (session.opened): payload: expected object',
};

const page: RuntimeSessionsReply = { ok: true, daemon_id: 'd-1', sessions: [resident, setupOnly, quarantined], next: 'sess-3' };

describe('runtime.sessions subject', () => {
  it('is <prefix>.v1.runtime.sessions', () => {
    expect(subjects().runtimeSessions).toBe('baton.v1.runtime.sessions');
    expect(subjects('acme.dev').runtimeSessions).toBe('acme.dev.v1.runtime.sessions');
  });
});

describe('runtime.sessions request', () => {
  it.each([
    ['empty', {}],
    ['a limit', { limit: 1 }],
    ['the largest limit', { limit: MAX_SESSIONS_PAGE }],
    ['a cursor', { after: 'sess-1' }],
    ['both', { limit: 50, after: 'Z_9-x' }],
  ])('accepts %s', (_name, value) => {
    expect(RuntimeSessionsRequestSchema.parse(value)).toEqual(value);
  });

  it.each([
    ['limit 0', { limit: 0 }],
    ['a fractional limit', { limit: 1.5 }],
    ['a limit above the page size', { limit: MAX_SESSIONS_PAGE + 1 }],
    ['a limit as text', { limit: '10' }],
    ['an invalid session id as cursor', { after: 'a.b' }],
    ['an unknown key', { limit: 1, offset: 2 }],
  ])('rejects %s', (_name, value) => {
    expect(RuntimeSessionsRequestSchema.safeParse(value).success).toBe(false);
  });
});

describe('runtime.sessions reply', () => {
  it('accepts a page with resident, setup-only and quarantined sessions and a cursor', () => {
    expect(RuntimeSessionsReplySchema.parse(page)).toEqual(page);
  });

  it('accepts the last page (no next) and an empty one', () => {
    const { next: _next, ...last } = page;
    expect(RuntimeSessionsReplySchema.parse(last)).toEqual(last);
    expect(RuntimeSessionsReplySchema.parse({ ok: true, daemon_id: 'd-1', sessions: [] })).toEqual({ ok: true, daemon_id: 'd-1', sessions: [] });
  });

  it('accepts a session whose last outcome is unknown (a log older than the field): absent', () => {
    const { last_outcome: _lo, ...unknown } = { ...resident, resident: false };
    expect(RuntimeSessionSchema.parse(unknown)).toEqual(unknown);
  });

  it('round-trips through MessagePack and JSON unchanged', () => {
    for (const encoding of ['msgpack', 'json'] as const) {
      expect(RuntimeSessionsReplySchema.parse(decodeReply(encodeReply(page, encoding), encoding))).toEqual(page);
    }
  });

  it.each([
    ['a bad writer slot', { ...resident, state: { ...state, writer: 'busy' } }],
    ['a bad outcome', { ...resident, last_outcome: { writer_id: 'w', outcome: 'exploded' } }],
    ['a bad failure kind', { ...resident, last_outcome: { writer_id: 'w', outcome: 'failure', failure: { kind: 'x', retryable: false } } }],
    ['no resident flag', { ...setupOnly, resident: undefined }],
    ['an invalid session id', { ...setupOnly, session_id: 'a b' }],
    ['a fractional opening time', { ...setupOnly, opened_at: 1.5 }],
  ])('rejects a session with %s', (_name, value) => {
    expect(RuntimeSessionSchema.safeParse(value).success).toBe(false);
  });

  it('rejects an invalid cursor', () => {
    expect(RuntimeSessionsReplySchema.safeParse({ ...page, next: 'a.b' }).success).toBe(false);
  });
});

describe('runtime.status additions', () => {
  const extended = { ...runtimeStatusReply, sessions_total: 7, quarantined: 1, rss_bytes: 123_456_789, log_bytes: 4_194_304 };

  it('keeps the new figures', () => {
    expect(RuntimeStatusReplySchema.parse(extended)).toEqual(extended);
  });

  it('still accepts a reply of a daemon that does not send them', () => {
    expect(RuntimeStatusReplySchema.parse(runtimeStatusReply)).toEqual(runtimeStatusReply);
  });

  it.each([
    ['negative rss', { ...extended, rss_bytes: -1 }],
    ['fractional log size', { ...extended, log_bytes: 0.5 }],
    ['quarantined as text', { ...extended, quarantined: '1' }],
  ])('rejects %s', (_name, value) => {
    expect(RuntimeStatusReplySchema.safeParse(value).success).toBe(false);
  });
});
