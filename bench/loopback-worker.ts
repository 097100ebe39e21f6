/**
 * The loopback model in a worker thread for the writers benchmark, so that its prompt tokenising and hashing do not
 * run on the daemon's main thread (a real provider would not either), plus per-thread CPU readings.
 */
import { readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { type LoopbackModelOptions, type LoopbackStats } from '@baton/testing';

/** CPU time of the calling thread in ms, from Linux `/proc/thread-self/stat`; undefined elsewhere. */
export function threadCpuMs(): number | undefined {
  try {
    const stat = readFileSync('/proc/thread-self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime are fields 14 and 15 of stat(5), in clock ticks (100 per second on Linux).
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined;
  }
}

/** CPU time of the whole process (every thread) in ms. */
export function processCpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

// ---------------------------------------------------------------------------------------------------------------
// the loopback model, in its own thread

/**
 * `startLoopbackModel` from `@baton/testing`, run in a worker thread. In this thread, the fake provider's
 * own work (parsing ~60 KB request bodies, hashing and tokenising every prompt piece for its simulated prefix cache)
 * took ~45 % of the main thread's busy time and set its event-loop delay; a real provider runs elsewhere, so it is
 * kept out of the thread whose delay is measured. It still shares the two cores with the daemon's workers.
 */
export interface LoopbackHandle {
  readonly baseURL: string;
  /** Sends the agent's own chat request to the loopback from its thread (warms the simulated prefix cache). */
  agentCall(body: Record<string, unknown>): Promise<void>;
  stats(): Promise<LoopbackStats>;
  /** CPU time of the loopback's thread in ms (Linux), else null. */
  cpu(): Promise<number | null>;
  close(): Promise<void>;
}

const LOOPBACK_WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
import(workerData.tsx)
  .then(({ register }) => { register(); return import(workerData.module); })
  .then(async ({ startLoopbackModel }) => {
    const model = await startLoopbackModel(workerData.options);
    const { readFileSync } = require('node:fs');
    const cpuMs = () => {
      try {
        const stat = readFileSync('/proc/thread-self/stat', 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        return (Number(fields[11]) + Number(fields[12])) * 10;
      } catch {
        return null;
      }
    };
    parentPort.on('message', async (msg) => {
      if (msg !== null && typeof msg === 'object' && 'agentCall' in msg) {
        // The agent's own request, serialised and sent from this thread so the daemon's main thread only pays a
        // structured clone.
        await fetch(model.baseURL + '/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(msg.agentCall.body) })
          .then((r) => r.arrayBuffer())
          .catch(() => undefined);
        parentPort.postMessage({ agentDone: msg.agentCall.id });
        return;
      }
      if (msg === 'stats') parentPort.postMessage({ stats: model.stats() });
      if (msg === 'cpu') parentPort.postMessage({ cpu: cpuMs() });
      if (msg === 'close') {
        await model.close();
        parentPort.postMessage({ closed: true });
        parentPort.close();
      }
    });
    parentPort.postMessage({ baseURL: model.baseURL });
  });
`;

export async function startLoopbackWorker(options: LoopbackModelOptions): Promise<LoopbackHandle> {
  const worker = new Worker(LOOPBACK_WORKER, {
    eval: true,
    workerData: { tsx: import.meta.resolve('tsx/esm/api'), module: import.meta.resolve('@baton/testing'), options },
  });
  const next = <T>(key: string): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const onMessage = (msg: Record<string, unknown>): void => {
        if (!(key in msg)) return;
        worker.off('message', onMessage);
        worker.off('error', reject);
        resolve(msg[key] as T);
      };
      worker.on('message', onMessage);
      worker.once('error', reject);
    });
  const baseURL = await next<string>('baseURL');
  const calls = new Map<number, () => void>();
  let callId = 0;
  worker.on('message', (msg: Record<string, unknown>) => {
    if (typeof msg['agentDone'] !== 'number') return;
    calls.get(msg['agentDone'])?.();
    calls.delete(msg['agentDone']);
  });
  return {
    baseURL,
    agentCall: (body) =>
      new Promise<void>((resolve) => {
        const id = ++callId;
        calls.set(id, resolve);
        worker.postMessage({ agentCall: { id, body } });
      }),
    stats: () => {
      const reply = next<LoopbackStats>('stats');
      worker.postMessage('stats');
      return reply;
    },
    cpu: () => {
      const reply = next<number | null>('cpu');
      worker.postMessage('cpu');
      return reply;
    },
    close: async () => {
      const closed = next<boolean>('closed');
      worker.postMessage('close');
      await closed;
      await worker.terminate();
    },
  };
}
