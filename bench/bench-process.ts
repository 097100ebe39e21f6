/**
 * Parent-side helpers of the benchmarks that run their daemon, floor service or load generator in child processes
 * (`concurrency`, `memory`, `session-load`): spawning a TypeScript child (`node --conditions=@baton/source --import tsx
 * <script>`: the workspace packages from their sources) with an IPC channel, waiting for its messages, stopping it
 * (and killing it on failure), plus small statistics helpers.
 *
 * A child gets its configuration as JSON in the `BENCH_CHILD_CONFIG` environment variable (`childConfig()` reads
 * it) and talks to the parent with `process.send` (`sendToParent()`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (children run there, so `--import tsx` and the workspace packages resolve). */
export const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));

const CONFIG_ENV = 'BENCH_CHILD_CONFIG';

/** One message of the IPC channel: a plain JSON object with a `type`. */
export interface ChildMessage {
  readonly type: string;
  readonly [key: string]: unknown;
}

/** A child process with an IPC channel, as the parent sees it. */
export interface BenchChild {
  readonly pid: number;
  readonly name: string;
  /** Sends a message to the child. */
  send(message: ChildMessage): void;
  /** The next message of `type` (buffered ones first); rejects when the child exits first or after `timeoutMs`. */
  next(type: string, timeoutMs?: number): Promise<ChildMessage>;
  /** Resolves with the exit code (or the signal name) once the child has exited. */
  readonly exited: Promise<number | string>;
  /** Asks the child to stop (`{ type: 'stop' }`), waits up to `timeoutMs`, then kills it. */
  stop(timeoutMs?: number): Promise<void>;
  /** SIGKILL, when still running. */
  kill(): void;
  /** The last few KB the child wrote on stderr. */
  stderrTail(): string;
}

export interface SpawnOptions {
  /** Extra node flags (e.g. `--expose-gc`), before `--import tsx`. */
  readonly nodeArgs?: readonly string[];
  /** Variables added to the child's environment. */
  readonly env?: Readonly<Record<string, string>>;
}

const STDERR_KEEP = 8192;

/** Starts `node --conditions=@baton/source --import tsx <script>` (script relative to bench/) with `config` in its environment. */
export function spawnBenchChild(script: string, config: unknown, options: SpawnOptions = {}): BenchChild {
  const path = fileURLToPath(new URL(script, import.meta.url));
  const child: ChildProcess = spawn(process.execPath, [...(options.nodeArgs ?? []), '--conditions=@baton/source', '--import', 'tsx', path], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    env: { ...process.env, ...options.env, [CONFIG_ENV]: JSON.stringify(config) },
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error(`could not start ${script}`);
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-STDERR_KEEP);
  });
  const buffered: ChildMessage[] = [];
  const waiters: { type: string; resolve: (m: ChildMessage) => void; reject: (e: Error) => void }[] = [];
  let exitInfo: number | string | undefined;
  const exited = new Promise<number | string>((resolve) => {
    child.on('exit', (code, signal) => {
      exitInfo = code ?? signal ?? 'unknown';
      for (const w of waiters.splice(0)) w.reject(new Error(`${script} (pid ${pid}) exited (${exitInfo}) before sending ${w.type}${tail()}`));
      resolve(exitInfo);
    });
  });
  const tail = (): string => (stderr.trim() === '' ? '' : `; stderr:\n${stderr.trim()}`);
  child.on('message', (raw) => {
    const message = raw as ChildMessage;
    if (message.type === 'error') {
      // A child that failed says why before it exits; the waiters get the child's own message.
      for (const w of waiters.splice(0)) w.reject(new Error(`${script}: ${String(message['message'])}`));
      return;
    }
    const at = waiters.findIndex((w) => w.type === message.type);
    if (at >= 0) waiters.splice(at, 1)[0]?.resolve(message);
    else buffered.push(message);
  });
  child.on('error', (err) => {
    for (const w of waiters.splice(0)) w.reject(err);
  });

  const handle: BenchChild = {
    pid,
    name: script,
    send: (message) => {
      if (exitInfo === undefined && child.connected) child.send(message);
    },
    next: (type, timeoutMs = 600_000) => {
      const at = buffered.findIndex((m) => m.type === type);
      if (at >= 0) return Promise.resolve(buffered.splice(at, 1)[0] as ChildMessage);
      if (exitInfo !== undefined) return Promise.reject(new Error(`${script} (pid ${pid}) exited (${exitInfo}) before sending ${type}${tail()}`));
      return new Promise<ChildMessage>((resolve, reject) => {
        const timer = setTimeout(() => {
          const i = waiters.indexOf(waiter);
          if (i >= 0) waiters.splice(i, 1);
          reject(new Error(`${script} (pid ${pid}) sent no ${type} within ${timeoutMs} ms${tail()}`));
        }, timeoutMs);
        const waiter = {
          type,
          resolve: (m: ChildMessage) => {
            clearTimeout(timer);
            resolve(m);
          },
          reject: (e: Error) => {
            clearTimeout(timer);
            reject(e);
          },
        };
        waiters.push(waiter);
      });
    },
    exited,
    stop: async (timeoutMs = 30_000) => {
      if (exitInfo !== undefined) return;
      handle.send({ type: 'stop' });
      let timer: NodeJS.Timeout | undefined;
      const timedOut = await Promise.race([
        exited.then(() => false),
        new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(true), timeoutMs);
        }),
      ]);
      clearTimeout(timer);
      if (timedOut) {
        handle.kill();
        await exited;
      }
    },
    kill: () => {
      if (exitInfo === undefined) child.kill('SIGKILL');
    },
    stderrTail: () => stderr,
  };
  return handle;
}

/**
 * Runs `body` with a registry of children that are all killed (if still running) when it returns or throws, so a
 * failing benchmark leaves no process behind.
 */
export async function withChildren<T>(body: (track: (child: BenchChild) => BenchChild) => Promise<T>): Promise<T> {
  const children: BenchChild[] = [];
  try {
    return await body((child) => {
      children.push(child);
      return child;
    });
  } finally {
    for (const child of children) child.kill();
    await Promise.all(children.map((c) => c.exited));
  }
}

// ---------------------------------------------------------------------------------------------------------------
// child side

/** The configuration the parent passed (`BENCH_CHILD_CONFIG`). */
export function childConfig<T>(): T {
  const raw = process.env[CONFIG_ENV];
  if (raw === undefined) throw new Error(`${CONFIG_ENV} is not set: this script is started by a benchmark section`);
  return JSON.parse(raw) as T;
}

/** Sends a message to the parent; resolves once it is handed over (at once without an IPC channel). */
export function sendToParent(message: ChildMessage): Promise<void> {
  return new Promise((resolve) => {
    if (process.send === undefined || !process.connected) resolve();
    else process.send(message, undefined, {}, () => resolve());
  });
}

/**
 * Runs a child's main function: reports an error to the parent (`{ type: 'error' }`) and exits non-zero when it
 * fails; exits when the parent goes away.
 */
export function runChild(main: () => Promise<void>): void {
  process.on('disconnect', () => process.exit(0));
  main().catch((err: unknown) => {
    const message = err instanceof Error ? (err.stack ?? err.message) : String(err);
    process.stderr.write(`${message}\n`);
    process.exitCode = 1;
    void sendToParent({ type: 'error', message }).then(() => process.exit(1));
    setTimeout(() => process.exit(1), 1000).unref();
  });
}

/** Resolves on the parent's `{ type: 'stop' }` message or SIGTERM. */
export function stopRequested(): Promise<void> {
  return new Promise((resolve) => {
    process.on('message', (m: ChildMessage) => {
      if (m.type === 'stop') resolve();
    });
    process.once('SIGTERM', () => resolve());
  });
}

// ---------------------------------------------------------------------------------------------------------------
// statistics and files

/** A copy of `values`, ascending. */
export function sortedOf(values: readonly number[]): number[] {
  return [...values].sort((a, b) => a - b);
}

/** Sends `message` to a bench child and waits for its answer (the reply of the same type). */
export async function ask<T>(child: BenchChild, message: ChildMessage, timeoutMs = 600_000): Promise<T> {
  child.send(message);
  return (await child.next(message.type, timeoutMs)) as unknown as T;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** Nearest-rank quantile of an ascending array. */
export function quantile(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const pos = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[pos] as number;
}

export const round1 = (x: number): number => Math.round(x * 10) / 10;
export const round2 = (x: number): number => Math.round(x * 100) / 100;
export const MiB = 1024 * 1024;

/** Bytes of a directory tree: apparent size (sum of file sizes) and allocated size (blocks, for sparse files). */
export function treeSize(dir: string): { apparent: number; allocated: number } {
  let apparent = 0;
  let allocated = 0;
  const walk = (d: string): void => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, entry.name);
      if (entry.isDirectory()) walk(p);
      else if (entry.isFile()) {
        const s = statSync(p);
        apparent += s.size;
        allocated += s.blocks * 512;
      }
    }
  };
  walk(dir);
  return { apparent, allocated };
}

/**
 * CPU time (user + system, ms) of a process (all its threads) and of its main thread, from Linux /proc; undefined
 * elsewhere or once it exited.
 */
export function processCpu(pid: number): { total: number; main: number } | undefined {
  const ticks = (path: string): number => {
    const stat = readFileSync(path, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime are fields 14 and 15 of stat(5), in clock ticks (100 per second on Linux).
    return (Number(fields[11]) + Number(fields[12])) * 10;
  };
  try {
    return { total: ticks(`/proc/${pid}/stat`), main: ticks(`/proc/${pid}/task/${pid}/stat`) };
  } catch {
    return undefined;
  }
}

/** The shape of one line of `bench/main.ts`'s targets summary (kept structural so sections need not import main). */
export interface SectionTarget {
  readonly label: string;
  readonly value: number | undefined;
  readonly unit: string;
  readonly target: string;
  readonly pass: (value: number) => boolean;
}

/** Prints a section the way the standalone runs of the other sections do. */
export function printStandalone(section: { title: string; rows: readonly { name: string; value: number; unit: string; note?: string }[] }, seconds: number): void {
  console.log(section.title);
  const width = Math.max(...section.rows.map((r) => r.name.length));
  for (const row of section.rows) {
    console.log(`  ${row.name.padEnd(width)} ${String(row.value).padStart(12)} ${row.unit}${row.note ? `  (${row.note})` : ''}`);
  }
  console.log(`  (${seconds.toFixed(1)} s)`);
}
