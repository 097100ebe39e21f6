import { join } from 'node:path';
import { BatonClient, MemoryBus, MemoryTransport } from '@baton/client';
import { SNAPSHOT_KEY, sessionStream, type AppendInput } from '@baton/log-schema';
import { BatonDaemon, LmdbEventLog, verifySession } from '@baton/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENT_TOOLS, MODEL, SYSTEM_PROMPT, TEST_TAIL, WRITER_TOOLS, conversation } from './support/conversation.ts';
import { startHarness, type Harness } from './support/daemon-harness.ts';

/**
 * A daemon killed after a writer's own stream settled (its validation passed, its commit done: durable) but before the
 * session logged the settlement. The log such a kill leaves is made exactly: a real run's log, with the session stream
 * cut just before its `writer.settled` (a tail, so every seq stays as written). The daemon that loads it must settle
 * the writer as its stream did — as `baton replay --verify` re-folds it — not as `cancelled`.
 */
describe('recovery settles a writer as its own stream did', () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness();
  });
  afterAll(async () => {
    await harness.stop();
  });

  it('settles a writer whose stream settled before the kill with its own outcome, and the session replays', { timeout: 120_000 }, async () => {
    const { client, log, dataDir } = harness;
    const { session_id: sid } = await client.open({ project_id: 'shop', model: MODEL, system: SYSTEM_PROMPT, tools: AGENT_TOOLS, writer_tools: WRITER_TOOLS });
    await client.append(sid, conversation(6, { step: 400 }));
    const settled = client.waitForEvent(sid, (e) => e.type === 'writer.settled', 60_000);
    expect((await client.checkpoint(sid)).result).toBe('started');
    expect(await settled).toMatchObject({ outcome: 'success' });
    await harness.daemon.stop();

    // The crash image: every stream as written, the session's cut before the settlement.
    const sessionRecords = [...log.read(sessionStream(sid))];
    const cut = sessionRecords.findIndex((r) => r.type === 'writer.settled');
    expect(cut).toBeGreaterThan(0);
    const writerId = (sessionRecords[cut]?.payload as { writerId: string }).writerId;
    const image = LmdbEventLog.open({ path: join(dataDir, 'events-killed') });
    const bus = new MemoryBus();
    const transports = [new MemoryTransport(bus), new MemoryTransport(bus)];
    let daemon: BatonDaemon | null = null;
    try {
      for (const stream of log.streams()) {
        const records = [...log.read(stream)];
        const kept = stream === sessionStream(sid) ? records.slice(0, cut) : records;
        const inputs: AppendInput[] = kept.map((r) => ({
          type: r.type,
          at: r.at,
          payload: r.payload,
          ...(r.msgId !== undefined ? { msgId: r.msgId } : {}),
          ...(r.type === 'snapshot' ? { keys: [SNAPSHOT_KEY] } : {}),
        }));
        if (inputs.length > 0) await image.append(stream, inputs);
      }
      expect([...image.read(`writer/${writerId}`)].length).toBeGreaterThan(1);

      daemon = BatonDaemon.start({
        transport: transports[0] as MemoryTransport,
        log: image,
        dataDir,
        poolSize: 1,
        model: { baseURL: harness.model.baseURL, apiKey: 'test', maxRetries: 0, timeoutMs: 10_000 },
        tail: TEST_TAIL,
      });
      await daemon.ready();
      const restarted = new BatonClient(transports[1] as MemoryTransport);
      // Loading the session settles the writer that held its slot.
      const status = await restarted.status(sid);
      expect(status.last_outcome).toMatchObject({ writer_id: writerId, outcome: 'success' });
      const settlement = [...image.read(sessionStream(sid))].filter((r) => r.type === 'writer.settled');
      expect(settlement.map((r) => (r.payload as { outcome: string }).outcome)).toEqual(['success']);
      await daemon.sessions.flushDecisions();
      expect(verifySession(image, sid).divergence).toBeNull();
    } finally {
      await daemon?.stop();
      for (const t of transports) await t.close();
      await image.close();
    }
  });
});
