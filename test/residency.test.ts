import { type Message, type StatusReply } from '@baton/protocol';
import { verifySession } from '@baton/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENT_TOOLS, MODEL, SYSTEM_PROMPT, WRITER_TOOLS, conversation } from './support/conversation.ts';
import { startHarness, type Harness } from './support/daemon-harness.ts';
import { ManualClock } from './support/manual-clock.ts';

async function openSession(h: Harness): Promise<string> {
  const open = await h.client.open({ project_id: 'shop', model: MODEL, system: SYSTEM_PROMPT, tools: AGENT_TOOLS, writer_tools: WRITER_TOOLS });
  return open.session_id;
}

/** Asks for a checkpoint and waits for the writer it started to settle; returns the settlement event. */
async function runWriter(h: Harness, sid: string): Promise<{ outcome: string; writer_id: string }> {
  const settled = h.client.waitForEvent(sid, (e) => e.type === 'writer.settled', 30_000);
  expect((await h.client.checkpoint(sid)).result).toBe('started');
  const event = await settled;
  if (event.type !== 'writer.settled') throw new Error('not a settlement');
  return event;
}

/** Sessions in memory, once the evictions the last request started have finished. */
async function residentAfterIdle(h: Harness): Promise<string[]> {
  await h.daemon.sessions.idle();
  const count = (await h.client.runtimeStatus()).sessions;
  const resident = [...h.daemon.sessions.residentSummaries().keys()];
  expect(resident).toHaveLength(count);
  return resident;
}

/** Settlements of a session as its log records them. */
function settlementsOf(h: Harness, sid: string): { writerId: string; outcome: string }[] {
  return [...h.log.read(`session/${sid}`)].filter((r) => r.type === 'writer.settled').map((r) => r.payload as { writerId: string; outcome: string });
}

/**
 * Residency: at most `maxResident` sessions stay in memory (least recently used idle ones leave first, never one
 * whose writer runs); a session that left comes back on its next request exactly as it was — status, dedupe,
 * writers — loaded from the snapshot written when it left.
 */
describe('a daemon with residency.maxResident = 2', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ poolSize: 2, daemon: { residency: { maxResident: 2 } } });
  });
  afterAll(async () => {
    await h.stop();
  });

  it('keeps at most two sessions in memory and brings evicted ones back as they were', async () => {
    const sessions: string[] = [];
    const messages = new Map<string, Message[]>();
    const before = new Map<string, StatusReply>();
    for (let i = 0; i < 4; i++) {
      const sid = await openSession(h);
      sessions.push(sid);
      expect((await residentAfterIdle(h)).length).toBeLessThanOrEqual(2);
      const convo = conversation(3, { prefix: `s${i}-` });
      messages.set(sid, convo);
      expect((await h.client.append(sid, convo)).accepted).toBe(convo.length);
      expect((await residentAfterIdle(h)).length).toBeLessThanOrEqual(2);
      expect(await runWriter(h, sid)).toMatchObject({ outcome: 'success' });
      const status = await h.client.status(sid);
      expect(status.last_outcome).toMatchObject({ outcome: 'success' });
      expect(status.files.checkpoint).toMatchObject({ exists: true, version: 1 });
      before.set(sid, status);
      expect((await residentAfterIdle(h)).length).toBeLessThanOrEqual(2);
    }
    // The two least recently used left memory, each with a snapshot of its state in its log.
    const [s0, s1, s2, s3] = sessions as [string, string, string, string];
    expect((await residentAfterIdle(h)).sort()).toEqual([s2, s3].sort());
    for (const sid of [s0, s1]) expect([...h.log.read(`session/${sid}`)].some((r) => r.type === 'snapshot')).toBe(true);

    for (const sid of sessions) {
      // Status is what it was before the session left memory.
      expect(await h.client.status(sid)).toStrictEqual(before.get(sid));
      expect((await residentAfterIdle(h)).length).toBeLessThanOrEqual(2);
      // Dedupe survives: an old id is a duplicate, new messages are accepted.
      const old = (messages.get(sid) ?? []).slice(0, 1);
      expect(await h.client.append(sid, old)).toMatchObject({ accepted: 0, duplicates: 1 });
      const more = conversation(1, { prefix: `${sid}-more-`, start: 7_500 });
      expect(await h.client.append(sid, [...old, ...more])).toMatchObject({ accepted: more.length, duplicates: 1 });
      expect((await residentAfterIdle(h)).length).toBeLessThanOrEqual(2);
    }
    // Evict them all once more (the newest two push the others out), then a writer runs on a reloaded session.
    for (const sid of sessions) {
      await h.client.status(sid);
      expect((await residentAfterIdle(h)).length).toBeLessThanOrEqual(2);
    }
    expect(await residentAfterIdle(h)).not.toContain(s0);
    const second = await runWriter(h, s0);
    expect(second).toMatchObject({ outcome: 'success' });
    const status = await h.client.status(s0);
    expect(status.last_outcome).toMatchObject({ outcome: 'success', writer_id: second.writer_id });
    expect(status.files.checkpoint.version).toBe(2);
    expect((await residentAfterIdle(h)).length).toBeLessThanOrEqual(2);

    await h.daemon.sessions.flushDecisions();
    for (const sid of sessions) {
      const verified = verifySession(h.log, sid);
      expect(verified.divergence).toBeNull();
      expect(verified.snapshots).toBeGreaterThan(0);
      expect(settlementsOf(h, sid).every((s) => s.outcome === 'success')).toBe(true);
    }
  });

  it('never evicts a session whose writer runs', async () => {
    await h.daemon.sessions.waitWritersIdle(30_000);
    h.model.reset();
    const busy = await openSession(h);
    await h.client.append(busy, conversation(3, { prefix: 'busy-' }));
    // The writer's first model call waits until the test lets it answer (a 503: a transient failure).
    let called!: () => void;
    const calledNow = new Promise<void>((resolve) => (called = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    h.model.script(async () => {
      called();
      await released;
      return { error: { status: 503, message: 'overloaded' } };
    });
    const settled = h.client.waitForEvent(busy, (e) => e.type === 'writer.settled', 30_000);
    expect((await h.client.checkpoint(busy)).result).toBe('started');
    await calledNow;

    for (let i = 0; i < 3; i++) {
      const other = await openSession(h);
      await h.client.append(other, conversation(2, { prefix: `other${i}-` }));
      const resident = await residentAfterIdle(h);
      expect(resident).toContain(busy);
      expect(resident).toContain(other);
      expect(resident.length).toBeLessThanOrEqual(2);
    }
    expect((await h.client.status(busy)).writer).not.toBeNull();
    release();
    // Settled by its own run: an eviction would have made the reload settle it as `cancelled` first.
    expect(await settled).toMatchObject({ outcome: 'failure', failure: { kind: 'transient' } });
    expect(settlementsOf(h, busy).map((s) => s.outcome)).toEqual(['failure']);
    expect((await h.client.status(busy)).last_outcome).toMatchObject({ outcome: 'failure', failure: { kind: 'transient' } });
  });
  it('hands a session\'s agent key to its writers again when it comes back after an eviction', async () => {
    await h.daemon.sessions.waitWritersIdle(30_000);
    h.model.reset();
    const keyed = await openSession(h);
    await h.client.append(keyed, conversation(2, { prefix: 'keyed-' }));
    h.daemon.sessions.setWriterKey(keyed, 'sk-agent-of-keyed');
    const writerKeys = (): (string | undefined)[] => h.model.requests.map((r) => r.headers.authorization);
    expect(await runWriter(h, keyed)).toMatchObject({ outcome: 'success' });
    expect(writerKeys().length).toBeGreaterThan(0);
    expect(new Set(writerKeys())).toEqual(new Set(['Bearer sk-agent-of-keyed']));

    // Two other sessions push it out of memory; their writers use the daemon's key.
    h.model.reset();
    for (let i = 0; i < 2; i++) {
      const other = await openSession(h);
      await h.client.append(other, conversation(2, { prefix: `unkeyed${i}-` }));
      expect(await runWriter(h, other)).toMatchObject({ outcome: 'success' });
    }
    expect(await residentAfterIdle(h)).not.toContain(keyed);
    expect(new Set(writerKeys())).toEqual(new Set(['Bearer test']));

    // Loaded again by its next request: its writers still use the agent's key.
    h.model.reset();
    await h.client.append(keyed, conversation(1, { prefix: 'keyed-more-', start: 7_500 }));
    expect(await runWriter(h, keyed)).toMatchObject({ outcome: 'success' });
    expect(new Set(writerKeys())).toEqual(new Set(['Bearer sk-agent-of-keyed']));

    // Handed back: the daemon's own key again.
    h.daemon.sessions.setWriterKey(keyed, null);
    h.model.reset();
    await h.client.append(keyed, conversation(1, { prefix: 'keyed-last-', start: 9_000 }));
    expect(await runWriter(h, keyed)).toMatchObject({ outcome: 'success' });
    expect(new Set(writerKeys())).toEqual(new Set(['Bearer test']));
  });
});

describe('a daemon with a short residency.idleMs (manual clock)', () => {
  let h: Harness;
  const clock = new ManualClock();
  beforeAll(async () => {
    h = await startHarness({ poolSize: 1, daemon: { clock, residency: { idleMs: 1_000 } } });
  });
  afterAll(async () => {
    await h.stop();
  });

  it('unloads sessions idle for idleMs, reloads them as they were, and unloads a closed session at once', async () => {
    const a = await openSession(h);
    const b = await openSession(h);
    const convoA = conversation(3, { prefix: 'a' });
    await h.client.append(a, convoA);
    await h.client.append(b, conversation(3, { prefix: 'b' }));
    expect(await runWriter(h, a)).toMatchObject({ outcome: 'success' });
    const statusA = await h.client.status(a);
    const statusB = await h.client.status(b);
    expect((await residentAfterIdle(h)).sort()).toEqual([a, b].sort());

    // Less than idleMs: both stay.
    clock.advance(900);
    expect((await residentAfterIdle(h)).sort()).toEqual([a, b].sort());
    // Past idleMs: both leave.
    clock.advance(1_200);
    expect(await residentAfterIdle(h)).toEqual([]);

    expect(await h.client.status(a)).toStrictEqual(statusA);
    expect(await residentAfterIdle(h)).toEqual([a]);
    expect(await h.client.append(a, convoA.slice(0, 2))).toMatchObject({ accepted: 0, duplicates: 2 });
    expect(await runWriter(h, a)).toMatchObject({ outcome: 'success' });

    // Closing takes a session out of memory without any time passing; the others stay.
    expect(await h.client.status(b)).toStrictEqual(statusB);
    expect((await residentAfterIdle(h)).sort()).toEqual([a, b].sort());
    await h.client.close(b);
    expect(await residentAfterIdle(h)).toEqual([a]);
    const reopened = await h.client.open({ session_id: b, project_id: 'shop', model: MODEL });
    expect(reopened.resumed).toBe(true);
    expect((await h.client.append(b, conversation(1, { prefix: 'b-more', start: 7_500 }))).accepted).toBe(4);

    await h.daemon.sessions.flushDecisions();
    for (const sid of [a, b]) expect(verifySession(h.log, sid).divergence).toBeNull();
  });
});
