import { threadId, type MessagePort } from 'node:worker_threads';
import { systemClock } from '../time/clock.ts';
import { ActorHost } from './actor-host.ts';
import type { HostOptions } from './worker-messages.ts';

/** Piscina task: hosts actors on `port` until the main thread sends `shutdown`. One such task per worker thread. */
export default async function hostActors(task: { port: MessagePort; options: HostOptions }): Promise<{ threadId: number }> {
  const host = new ActorHost(task.port, task.options, { clock: systemClock, threadId });
  await host.stopped;
  return { threadId };
}
