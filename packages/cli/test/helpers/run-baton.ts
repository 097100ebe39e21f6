import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * Node arguments that run `baton` from its TypeScript sources (the same `main()` the built `bin/baton.js` runs), so
 * the tests need no build: the workspace packages resolve to their sources through the `@baton/source` condition.
 */
export const BATON_SOURCE_ARGS: readonly string[] = [
  '--conditions=@baton/source',
  '--import',
  'tsx',
  fileURLToPath(new URL('./baton-source.ts', import.meta.url)),
];
/** The repository root (`npx baton` is run from there). */
export const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

export interface BatonRun {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Environment of a child `baton`: the parent's, without Baton's and OpenAI's variables unless given. */
export function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('BATON_') && !k.startsWith('OPENAI_')) env[k] = v;
  return { ...env, ...extra };
}

/** Starts `baton <args>` (from its sources) in a child process, in the repository root. */
export function spawnBaton(args: readonly string[], env: NodeJS.ProcessEnv = childEnv()): ChildProcess {
  return spawn(process.execPath, [...BATON_SOURCE_ARGS, ...args], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Collects a child's output until it exits. */
export function completion(child: ChildProcess): Promise<BatonRun> {
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** Runs `baton <args>` to completion. */
export function runBaton(args: readonly string[], env?: NodeJS.ProcessEnv): Promise<BatonRun> {
  return completion(spawnBaton(args, env));
}

/** Resolves with the first line of `stream` (stdout by default) matching `pattern`; rejects if the child exits first. */
export function waitForLine(child: ChildProcess, pattern: RegExp, stream: 'stdout' | 'stderr' = 'stdout'): Promise<string> {
  const source = stream === 'stdout' ? child.stdout : child.stderr;
  return new Promise((resolve, reject) => {
    let buffer = '';
    const onData = (d: Buffer | string): void => {
      buffer += d.toString();
      const line = buffer.split('\n').find((l) => pattern.test(l));
      if (line !== undefined) {
        source?.off('data', onData);
        child.off('exit', onExit);
        resolve(line);
      }
    };
    const onExit = (code: number | null): void => reject(new Error(`baton exited with ${String(code)} before printing ${String(pattern)}; output: ${buffer}`));
    source?.on('data', onData);
    child.once('exit', onExit);
  });
}
