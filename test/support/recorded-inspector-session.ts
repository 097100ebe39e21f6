import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BatonClient, MemoryBus } from '@baton/client';
import { BatonDaemon, LmdbEventLog } from '@baton/runtime';
import { startLoopbackModel, type LoopbackModel } from '@baton/testing';
import { AGENT_TOOLS, MODEL, SYSTEM_PROMPT, TEST_TAIL, WRITER_TOOLS, conversation } from './conversation.ts';

const SETTLE_MS = 30_000;

/** A daemon on an LMDB log in `dataDir`, reached in-process, writers answered by the loopback model. */
export interface RecordingDaemon {
  readonly dataDir: string;
  readonly log: LmdbEventLog;
  readonly client: BatonClient;
  readonly model: LoopbackModel;
  /** Stops the daemon and the model and closes the log; the data directory stays. */
  stop(): Promise<void>;
}

export async function startRecordingDaemon(dataDir?: string): Promise<RecordingDaemon> {
  const dir = dataDir ?? (await mkdtemp(join(tmpdir(), 'baton-inspector-')));
  const model = await startLoopbackModel({ mode: 'extractive' });
  const bus = new MemoryBus();
  const log = LmdbEventLog.open({ path: join(dir, 'events') });
  const daemon = BatonDaemon.start({
    transport: bus.connect(),
    log,
    dataDir: dir,
    poolSize: 1,
    model: { baseURL: model.baseURL, apiKey: 'test', maxRetries: 0, timeoutMs: 10_000 },
    tail: TEST_TAIL,
  });
  await daemon.ready();
  return {
    dataDir: dir,
    log,
    client: new BatonClient(bus.connect()),
    model,
    async stop() {
      await daemon.stop();
      await log.close();
      await model.close();
    },
  };
}

/** What the recorded session holds, for the tests to compare the inspector against. */
export interface RecordedSession {
  readonly sessionId: string;
  /** Writers that settled, in order, with their outcomes. */
  readonly writers: readonly { readonly writerId: string; readonly outcome: string }[];
  readonly rebuilds: number;
}

/**
 * Records a fork-mode session that climbs past two threshold rungs (9 600 and 19 200 tokens: two writer runs, each
 * awaited), then overflows the usable window (48 000) and asks for a rebuild, which renders from the checkpoint;
 * three more turns follow on the rebuilt context, the last past the first rung again, whose writer fails (the model
 * refuses its key).
 */
export async function recordSession(d: RecordingDaemon): Promise<RecordedSession> {
  const { session_id: sid } = await d.client.open({
    project_id: 'shop',
    model: MODEL,
    system: SYSTEM_PROMPT,
    tools: AGENT_TOOLS,
    writer_tools: WRITER_TOOLS,
    checkpoint: { thresholds: ['20%', '40%'] },
  });
  const writers: { writerId: string; outcome: string }[] = [];
  const settleAfter = async (append: () => Promise<unknown>): Promise<void> => {
    const settled = d.client.waitForEvent(sid, (e) => e.type === 'writer.settled', SETTLE_MS);
    await append();
    const event = await settled;
    if (event.type === 'writer.settled') writers.push({ writerId: event.writer_id, outcome: event.outcome });
  };
  await settleAfter(() => d.client.append(sid, conversation(4, { prefix: 'a' })));
  // The second stretch asks for something else, so the second checkpoint version rewrites lines of the first.
  const refunds = conversation(4, { prefix: 'b', start: 12_000 }).map((m, i) =>
    m.role === 'user' ? { ...m, content: `Add a refund path to src/payments/refund-${i}.ts and log every refund.` } : m,
  );
  await settleAfter(() => d.client.append(sid, refunds));
  const overflowing = await d.client.append(sid, conversation(2, { prefix: 'c', start: 47_000, step: 1_000 }));
  if (!overflowing.state.overflow) throw new Error('the recorded session did not overflow');
  const rebuilt = await d.client.rebuild(sid, { reason: 'overflow' });
  if (rebuilt.outcome !== 'rebuilt') throw new Error(`the rebuild ended ${rebuilt.outcome}`);
  await d.client.append(sid, conversation(2, { prefix: 'd', start: 6_000 }));
  // The ladder re-armed with the rebuild: the first rung is crossed again, and that writer's model call is refused.
  d.model.script({ error: { status: 401, message: 'invalid api key' } });
  await settleAfter(() => d.client.append(sid, conversation(1, { prefix: 'e', start: 10_000 })));
  return { sessionId: sid, writers, rebuilds: 1 };
}
