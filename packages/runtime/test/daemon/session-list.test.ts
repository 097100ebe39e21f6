import { sessionLog, sessionStream, type SessionAppend } from '@baton/log-schema';
import { ProtocolError, type OpenRequest } from '@baton/protocol';
import { beforeEach, describe, expect, it } from 'vitest';
import { listSessions, sessionIds, type LiveSessions } from '../../src/daemon/session-list.ts';
import { sessionSetupFor } from '../../src/daemon/session-setup.ts';
import { MemoryEventLog } from '../../src/event-log/memory-event-log.ts';
import type { SessionSummary } from '../../src/host/worker-messages.ts';

/*
 * The session list `runtime.sessions` serves, on an in-memory log written through the session schema: setup from
 * `session.opened`, the newest decision found from the end of a long stream, live summaries for resident sessions,
 * logs older than `lastOutcome`, records that fail their schema, paging.
 */

const AT = 1_733_000_000_000;
const REQUEST: OpenRequest = { project_id: 'shop', model: { id: 'gpt-4o', context_window: 64_000, max_output_tokens: 8_000 } };

type DecisionState = Extract<SessionAppend, { type: 'decision' }>['payload']['state'];

const idle: DecisionState = {
  value: { slot: 'idle', rebuild: 'idle', lifecycle: 'active' },
  tokens: 0,
  usableWindow: 48_000,
  nextThreshold: 9_600,
  watermark: null,
  writer: 'idle',
  writerId: null,
  overflow: false,
  closed: false,
  closing: false,
  rebuilding: false,
  rebuildRequestId: null,
  lastOutcome: null,
};

const noLive: LiveSessions = { resident: new Map(), quarantined: new Map() };

let log: MemoryEventLog;

async function open(sessionId: string, request: OpenRequest = REQUEST): Promise<void> {
  const setup = sessionSetupFor(request, sessionId, {});
  await sessionLog(log).append(sessionId, [{ type: 'session.opened', at: AT, payload: { setup, encoding: 'msgpack', request }, msgId: 'session.opened' }]);
}

async function decide(sessionId: string, state: Partial<DecisionState>): Promise<void> {
  const seq = sessionLog(log).lastSeq(sessionId);
  await sessionLog(log).append(sessionId, [{ type: 'decision', at: AT + seq, payload: { for: seq, state: { ...idle, ...state }, effects: [] } }]);
}

async function userMessages(sessionId: string, count: number): Promise<void> {
  const base = sessionLog(log).lastSeq(sessionId);
  const records: SessionAppend[] = Array.from({ length: count }, (_v, i) => ({
    type: 'messages.appended',
    at: AT + base + i,
    payload: { messages: [{ id: `u${base + i}`, role: 'user', content: `message ${i}` }] },
  }));
  await sessionLog(log).append(sessionId, records);
}

beforeEach(() => {
  log = new MemoryEventLog();
});

describe('listSessions', () => {
  it('finds the newest decision far back in a long stream without folding, and its last outcome', async () => {
    await open('s1');
    await decide('s1', { tokens: 100 });
    await decide('s1', {
      tokens: 7_777,
      watermark: 'u3',
      closed: true,
      lastOutcome: { writerId: 's1-w2', outcome: 'failure', failure: { kind: 'transient', retryable: true, message: '429' }, reason: 'rate limited' },
    });
    await userMessages('s1', 700); // inputs that changed nothing leave no decision: the newest is ~700 records back
    const { sessions, next } = listSessions(log, noLive, {});
    expect(next).toBeUndefined();
    expect(sessions).toEqual([
      {
        session_id: 's1',
        project_id: 'shop',
        model: 'gpt-4o',
        opened_at: AT,
        resident: false,
        quarantined: false,
        state: { tokens: 7_777, usable_window: 48_000, next_threshold: 9_600, watermark: 'u3', writer: 'idle', overflow: false },
        closed: true,
        last_outcome: { writer_id: 's1-w2', outcome: 'failure', failure: { kind: 'transient', retryable: true }, reason: 'rate limited' },
      },
    ]);
  });

  it('shows the setup only for a session with no decision, and leaves last_outcome out for a log older than the field', async () => {
    await open('fresh');
    await userMessages('fresh', 3);
    await open('old');
    await decide('old', { tokens: 42, lastOutcome: undefined });
    const [fresh, old] = listSessions(log, noLive, {}).sessions;
    expect(fresh).toMatchObject({ session_id: 'fresh', project_id: 'shop', resident: false, state: null, closed: false, last_outcome: null });
    expect(old?.state?.tokens).toBe(42);
    expect(old).not.toHaveProperty('last_outcome');
  });

  it('uses the live summary of a resident session and marks a quarantined one, with its reason', async () => {
    await open('live');
    await decide('live', { tokens: 1 });
    await open('bad');
    const summary: SessionSummary = { ...idle, tokens: 5_010, writer: 'running', writerId: 'live-w1', rebuildRequestId: null, lastOutcome: null, draining: false };
    const live: LiveSessions = {
      resident: new Map([['live', summary]]),
      quarantined: new Map([['bad', new ProtocolError('quarantined', 'session bad is quarantined: cannot fold seq 7')]]),
    };
    const [bad, resident] = listSessions(log, live, {}).sessions;
    expect(resident).toMatchObject({ resident: true, quarantined: false, state: { tokens: 5_010, writer: 'running' }, last_outcome: null });
    expect(bad).toMatchObject({ resident: false, quarantined: true, state: null, error: 'session bad is quarantined: cannot fold seq 7' });
  });

  it('reports records that fail their schema in error instead of failing the list', async () => {
    await open('good');
    await log.append(sessionStream('broken'), [{ type: 'session.opened', at: AT, payload: { setup: 'nope' } }]);
    await open('baddecision');
    await log.append(sessionStream('baddecision'), [{ type: 'decision', at: AT, payload: { for: 1, state: { tokens: 'many' }, effects: [] } }]);
    const sessions = listSessions(log, noLive, {}).sessions;
    expect(sessions.map((s) => s.session_id)).toEqual(['baddecision', 'broken', 'good']);
    expect(sessions[0]).toMatchObject({ project_id: 'shop', state: null, error: expect.stringContaining('decision') as unknown });
    expect(sessions[1]).toMatchObject({ project_id: null, model: null, opened_at: null, error: expect.stringContaining('session.opened') as unknown });
    expect(sessions[2]).not.toHaveProperty('error');
  });

  it('pages in ascending id order: limit, after (exclusive) and next', async () => {
    for (const id of ['b', 'a', 'C', 'a-2', 'c_1']) await open(id);
    await log.append('writer/a-w1', [{ type: 'writer.started', at: AT, payload: {} }]);
    expect(sessionIds(log)).toEqual(['C', 'a', 'a-2', 'b', 'c_1']);
    const first = listSessions(log, noLive, { limit: 2 });
    expect(first.sessions.map((s) => s.session_id)).toEqual(['C', 'a']);
    expect(first.next).toBe('a');
    const second = listSessions(log, noLive, { limit: 2, after: 'a' });
    expect(second.sessions.map((s) => s.session_id)).toEqual(['a-2', 'b']);
    expect(second.next).toBe('b');
    const last = listSessions(log, noLive, { limit: 2, after: 'b' });
    expect(last.sessions.map((s) => s.session_id)).toEqual(['c_1']);
    expect(last.next).toBeUndefined();
    expect(listSessions(log, noLive, { limit: 3, after: 'c_1' })).toEqual({ sessions: [] });
    expect(listSessions(log, noLive, { after: 'zz' }).sessions).toEqual([]);
  });
});
