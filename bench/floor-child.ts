/**
 * The FLOOR of the `concurrency` section: the least a service can do to answer Baton's `open` and `append` requests
 * durably, in its own process. A bare NATS subscriber (the same `NatsTransport` the daemon uses) on `open` (answering
 * a valid open reply) and `session.*.append`, unscoped and under every project (queue group as the daemon's), that msgpack-decodes
 * the request, puts it into LMDB with lmdb-js, and replies `{ ok, accepted, duplicates: 0, state }` once it is
 * committed. Puts are batched like the event log's group commit: every request of one event-loop turn is put in one
 * synchronous run (lmdb-js makes that one write transaction), then the last put's promise is awaited (resolved after
 * the synced commit) and all of them are answered.
 *
 * No schema validation, no dedupe, no actor, no decision records: that is the difference Baton's figures are
 * compared to. Messages: `ready`, `stopped` (like `daemon-child.ts`).
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { open } from 'lmdb';
import { Packr, Unpackr } from 'msgpackr';
import { NatsTransport, type InboundMessage } from '@baton/client';
import { OPEN_QUEUE_GROUP, subjects } from '@baton/protocol';
import { childConfig, runChild, sendToParent, stopRequested } from './bench-process.ts';

export interface FloorChildConfig {
  readonly natsUrl: string;
  readonly dataDir: string;
}

// The same plain MessagePack as the protocol codec (no records, no extensions).
const packr = new Packr({ useRecords: false, moreTypes: false });
const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true });

const STATE = { tokens: 0, usable_window: 100_000_000, next_threshold: null, watermark: null, writer: 'idle', overflow: false };

interface Pending {
  readonly msg: InboundMessage;
  readonly stream: string;
  readonly messages: readonly unknown[];
}

async function main(): Promise<void> {
  const config = childConfig<FloorChildConfig>();
  const stop = stopRequested();
  const transport = await NatsTransport.connect({ servers: config.natsUrl, name: `bench-floor-${process.pid}` });
  mkdirSync(join(config.dataDir, 'floor'), { recursive: true });
  const env = open({ path: join(config.dataDir, 'floor') });
  const db = env.openDB<unknown, [string, number]>('records', { encoding: 'msgpack' });
  const s = subjects();
  const heads = new Map<string, number>();

  let queue: Pending[] = [];
  let scheduled = false;
  const flush = async (): Promise<void> => {
    scheduled = false;
    const batch = queue;
    queue = [];
    let last: Promise<boolean> | undefined;
    const at = Date.now();
    for (const p of batch) {
      const seq = (heads.get(p.stream) ?? 0) + 1;
      heads.set(p.stream, seq);
      last = db.put([p.stream, seq], { type: 'messages.appended', at, payload: { messages: p.messages } });
    }
    await last;
    for (const p of batch) p.msg.respond(packr.pack({ ok: true, accepted: p.messages.length, duplicates: 0, state: STATE }));
  };

  const answerOpen = (msg: InboundMessage): void => {
    unpackr.unpack(msg.data);
    const sessionId = randomUUID();
    const root = join(config.dataDir, 'memory');
    msg.respond(
      packr.pack({
        ok: true,
        session_id: sessionId,
        resumed: false,
        memory: { root, checkpoint: join(root, 'checkpoint.md'), memory: join(root, 'MEMORY.md'), notes: join(root, 'notes.md'), tasks_dir: join(root, 'tasks') },
        thresholds: [],
        usable_window: STATE.usable_window,
      }),
    );
  };
  const queueAppend = (msg: InboundMessage): void => {
    const body = unpackr.unpack(msg.data) as { messages: unknown[] };
    // `….session.<sid>.append`, unscoped or under a project (`….p.<project>.session.<sid>.append`).
    const tokens = msg.subject.split('.');
    queue.push({ msg, stream: `session/${tokens[tokens.length - 2] ?? ''}`, messages: body.messages });
    if (!scheduled) {
      scheduled = true;
      setImmediate(() => {
        flush().catch((err: unknown) => process.stderr.write(`floor flush failed: ${String(err)}\n`));
      });
    }
  };
  // The subjects the daemon serves: a client that names a project sends to the project's subjects.
  for (const subject of [s.open, s.scopedOpenWildcard]) transport.subscribe(subject, answerOpen, { queue: OPEN_QUEUE_GROUP });
  for (const subject of [`${s.prefix}.v1.session.*.append`, s.scopedVerbWildcard('append')]) transport.subscribe(subject, queueAppend, { queue: OPEN_QUEUE_GROUP });
  await transport.flush();
  await sendToParent({ type: 'ready', pid: process.pid });
  await stop;
  await transport.close();
  await env.close();
  await sendToParent({ type: 'stopped' });
  process.exit(0);
}

runChild(main);
