import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';

/** Loads `target` in a fresh worker thread and returns every module file or URL that import pulled in. */
async function modulesLoadedBy(target: string): Promise<string[]> {
  const worker = new Worker(new URL('./isolation/record-loads.mjs', import.meta.url), { workerData: { target } });
  try {
    return await new Promise<string[]>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
  } finally {
    await worker.terminate();
  }
}

const HEAVY = ['lmdb', 'piscina', 'openai', 'xstate', 'gpt-tokenizer'];
const loadedHeavy = (modules: readonly string[]) => HEAVY.filter((name) => modules.some((m) => m.includes(`/node_modules/${name}/`)));

describe('@baton/client is light', () => {
  it('loads none of lmdb, piscina, openai (nor xstate or the tokenizer) when imported in a fresh worker', async () => {
    const modules = await modulesLoadedBy('@baton/client');
    expect(modules.some((m) => m.includes('/packages/client/src/'))).toBe(true);
    expect(modules.some((m) => m.includes('/node_modules/@nats-io/'))).toBe(true);
    expect(loadedHeavy(modules)).toEqual([]);
  }, 30_000);

  it('the same probe sees them when the daemon package is imported (the check can fail)', async () => {
    // The daemon's main thread loads lmdb and piscina; openai is loaded by its worker threads only.
    const modules = await modulesLoadedBy('@baton/runtime');
    expect(loadedHeavy(modules)).toEqual(expect.arrayContaining(['lmdb', 'piscina', 'xstate']) as unknown);
  }, 30_000);
});
