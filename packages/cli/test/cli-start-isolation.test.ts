import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';

/**
 * `baton --help` is fast because the CLI's entry module imports a command's module only when that command runs. This
 * probe imports the entry (`src/main.ts`) in a fresh worker thread and lists every module that pulled in, so a static
 * import of a command (and through it the runtime, lmdb, piscina, …) in `main.ts` fails here.
 */
async function modulesLoadedBy(target: string): Promise<string[]> {
  const worker = new Worker(new URL('../../client/test/isolation/record-loads.mjs', import.meta.url), { workerData: { target } });
  try {
    return await new Promise<string[]>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
  } finally {
    await worker.terminate();
  }
}

const HEAVY = ['lmdb', 'piscina', 'openai', '@anthropic-ai', 'xstate', 'zod', 'pino', 'prom-client', 'undici', 'msgpackr'];
const loadedHeavy = (modules: readonly string[]) => HEAVY.filter((name) => modules.some((m) => m.includes(`/node_modules/${name}/`)));
const loadedPackages = (modules: readonly string[]) =>
  [...new Set(modules.flatMap((m) => /\/packages\/([a-z-]+)\/src\//.exec(m)?.[1] ?? []))].sort();

describe('the CLI entry is light', () => {
  it('loads commander and the protocol subject names, none of the commands, the runtime or their dependencies', async () => {
    const modules = await modulesLoadedBy(new URL('../src/main.ts', import.meta.url).href);
    expect(modules.some((m) => m.includes('/node_modules/commander/'))).toBe(true);
    expect(modules.some((m) => m.endsWith('/packages/protocol/src/subjects.ts'))).toBe(true);
    expect(modules.filter((m) => m.includes('/packages/cli/src/commands/'))).toEqual([]);
    expect(loadedPackages(modules)).toEqual(['cli', 'protocol']);
    expect(loadedHeavy(modules)).toEqual([]);
  }, 30_000);

  it('the same probe sees the runtime when a command module is imported (the check can fail)', async () => {
    const modules = await modulesLoadedBy(new URL('../src/commands/replay-command.ts', import.meta.url).href);
    expect(loadedPackages(modules)).toContain('runtime');
    expect(loadedHeavy(modules)).toEqual(expect.arrayContaining(['lmdb', 'zod']) as unknown);
  }, 30_000);
});
