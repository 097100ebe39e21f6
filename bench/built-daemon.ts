/**
 * The daemon as it ships: the built `baton daemon` (packages/cli/bin/baton.js run as a program, as an installed
 * `baton` is: its shell line starts node with the allocator settings; dist/ on plain node, its workers on dist/ too,
 * no TypeScript compiled at run time), in its own process, for the benchmarks that compare it with the daemon run
 * from the sources. `buildPackages` brings dist/ up to date first (`tsc -b`, incremental).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { BatonClient, NatsTransport } from '@baton/client';
import { REPO_ROOT } from './bench-process.ts';

const BATON_BIN = fileURLToPath(new URL('../packages/cli/bin/baton.js', import.meta.url));
const TSC = fileURLToPath(new URL('../node_modules/typescript/bin/tsc', import.meta.url));
const execFileAsync = promisify(execFile);

/** Runs `node <args>` in the repository root; resolves with its stdout, rejects naming `what` when it fails. */
export async function runNode(args: readonly string[], what: string): Promise<string> {
  try {
    return (await execFileAsync(process.execPath, args, { cwd: REPO_ROOT, maxBuffer: 64 * 1024 * 1024 })).stdout;
  } catch (err) {
    const { stdout = '', stderr = '' } = err as { stdout?: string; stderr?: string };
    throw new Error(`${what} failed: ${err instanceof Error ? err.message : String(err)}\n${stdout.slice(-2000)}${stderr.slice(-2000)}`);
  }
}

/** Brings every package's dist/ up to date (`tsc -b tsconfig.build.json`, incremental). */
export async function buildPackages(): Promise<void> {
  await runNode([TSC, '-b', 'tsconfig.build.json'], 'the build (tsc -b)');
}

/** A running built daemon and a client of it. */
export interface BuiltDaemon {
  readonly pid: number;
  readonly client: BatonClient;
  readonly dir: string;
  /** SIGTERM (the daemon drains and exits), then the data directory is removed. */
  stop(): Promise<void>;
}

/**
 * Starts `baton daemon --pool-size <n>` from dist/ on `natsUrl` with a fresh data directory and checkpoints disabled
 * (no model is called); resolves once it answers `runtime.status`.
 */
export async function startBuiltDaemon(natsUrl: string, poolSize = 2, timeoutMs = 60_000): Promise<BuiltDaemon> {
  const dir = await mkdtemp(join(tmpdir(), 'baton-built-daemon-'));
  const child: ChildProcess = spawn(BATON_BIN, ['daemon', '--nats', natsUrl, '--data-dir', dir, '--pool-size', String(poolSize), '--log-level', 'warn'], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
    // The endpoint is never called (checkpoints are disabled); the command requires one.
    env: { ...process.env, BATON_DISABLE_CHECKPOINT: '1', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', OPENAI_API_KEY: 'unused' },
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-4096);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const transport = await NatsTransport.connect({ servers: natsUrl, name: 'bench-built-daemon-client' });
  const client = new BatonClient(transport, { timeoutMs: 60_000 });
  const stop = async (): Promise<void> => {
    await transport.close().catch(() => {});
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    await rm(dir, { recursive: true, force: true });
  };
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`baton daemon exited (${String(child.exitCode)}) before serving: ${stderr.trim()}`);
    }
    try {
      await client.runtimeStatus({ timeoutMs: 500 });
      break;
    } catch (err) {
      if (Date.now() > until) {
        await stop();
        throw new Error(`baton daemon did not answer runtime.status within ${timeoutMs} ms: ${String(err)}; ${stderr.trim()}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  if (child.pid === undefined) throw new Error('baton daemon has no pid');
  return { pid: child.pid, client, dir, stop };
}

/** RSS of a process from /proc (bytes): total, anonymous and file-backed. */
export function procRss(pid: number): { rss: number; rssAnon: number; rssFile: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (key: string): number => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN) * 1024;
  return { rss: kib('VmRSS'), rssAnon: kib('RssAnon'), rssFile: kib('RssFile') };
}
