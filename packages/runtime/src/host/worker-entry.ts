import type { MessagePort } from 'node:worker_threads';
import { ActorHost } from './actor-host.ts';
import type { HostOptions } from './worker-messages.ts';

/** Piscina task: hosts actors on `port` until the main thread sends `shutdown`. One such task per worker thread. */
export default async function hostActors(task: { port: MessagePort; options: HostOptions }): Promise<{ threadId: number }> {
  const host = new ActorHost(task.port, task.options);
  await host.stopped;
  const { threadId } = await import('node:worker_threads');
  return { threadId };
}
