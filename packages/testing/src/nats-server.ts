import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A nats-server child process started for tests, demos and benchmarks. */
export interface NatsServerHandle {
  /** `nats://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  /** Stops the server by pid (SIGTERM, then SIGKILL after 2 s) and removes its JetStream directory. */
  stop(): Promise<void>;
}

export interface NatsServerOptions {
  /** Binary to run. Default: `$NATS_SERVER_BIN`, else `nats-server` on PATH, else `/usr/sbin/nats-server`. */
  readonly binary?: string;
  /** Fixed port; default an ephemeral loopback port. */
  readonly port?: number;
  /** Maximum payload in bytes (server `max_payload`); default the server's own (1 MiB). */
  readonly maxPayload?: number;
  /** How long to wait for the server to accept connections. Default 10 s. */
  readonly readyTimeoutMs?: number;
  /** Run JetStream (default true); false starts a server without it. */
  readonly jetstream?: boolean;
  /** More `nats-server` command-line arguments, e.g. `['--user', 'u', '--pass', 'p']` or `['--auth', token]`. */
  readonly args?: readonly string[];
  /** More server configuration, as config-file text (e.g. an `authorization { users: [...] }` block). */
  readonly config?: string;
}

/** Finds a free loopback TCP port by binding port 0 and releasing it. */
export async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      if (addr === null || typeof addr === 'string') {
        srv.close();
        reject(new Error('could not obtain a free port'));
        return;
      }
      srv.close(() => resolve(addr.port));
    });
  });
}

export function defaultBinary(): string {
  return process.env['NATS_SERVER_BIN'] ?? 'nats-server';
}

/**
 * Starts a real `nats-server` on 127.0.0.1 with JetStream in a temporary store directory and waits until it logs
 * "Server is ready". Fails with a clear message when the binary is missing (install the Debian package `nats-server`).
 */
export async function startNatsServer(options: NatsServerOptions = {}): Promise<NatsServerHandle> {
  const port = options.port ?? (await freePort());
  const storeDir = await mkdtemp(join(tmpdir(), 'baton-nats-'));
  const js = options.jetstream === false ? [] : ['-js', '-sd', storeDir];
  const args = ['-a', '127.0.0.1', '-p', String(port), ...js, ...(options.args ?? [])];
  let configPath: string | undefined;
  if (options.maxPayload !== undefined || options.config !== undefined) {
    const { writeFile } = await import('node:fs/promises');
    configPath = join(storeDir, 'server.conf');
    const payload = options.maxPayload === undefined ? '' : `max_payload: ${options.maxPayload}\n`;
    await writeFile(configPath, `${payload}${options.config ?? ''}\n`);
    args.push('-c', configPath);
  }
  const binary = options.binary ?? defaultBinary();
  const child = await spawnServer(binary, args);
  const pid = child.pid;
  if (pid === undefined) throw new Error(`nats-server (${binary}) did not start`);
  try {
    await waitReady(child, options.readyTimeoutMs ?? 10_000);
  } catch (err) {
    child.kill('SIGKILL');
    await rm(storeDir, { recursive: true, force: true });
    throw err;
  }
  let stopped: Promise<void> | undefined;
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    pid,
    stop: () => {
      stopped ??= stopByPid(child, pid).finally(() => rm(storeDir, { recursive: true, force: true }));
      return stopped;
    },
  };
}

/** Spawns `binary` (trying the usual install paths for `nats-server`); rejects with an install hint when none runs. */
export async function spawnServer(binary: string, args: string[]): Promise<ChildProcess> {
  const candidates = binary === 'nats-server' ? ['nats-server', '/usr/sbin/nats-server', '/usr/bin/nats-server'] : [binary];
  let lastErr: unknown;
  for (const bin of candidates) {
    const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const ok = await new Promise<boolean>((resolve) => {
      child.once('spawn', () => resolve(true));
      child.once('error', (err) => {
        lastErr = err;
        resolve(false);
      });
    });
    if (ok) return child;
  }
  throw new Error(
    `cannot run nats-server (${String(lastErr)}); install it with "apt-get install -y nats-server" or set NATS_SERVER_BIN`,
  );
}

/** Resolves once the server logs "Server is ready"; rejects with its output when it exits first or after `timeoutMs`. */
export function waitReady(child: ChildProcess, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`nats-server not ready after ${timeoutMs} ms:\n${output}`));
    }, timeoutMs);
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      if (output.includes('Server is ready')) {
        cleanup();
        resolve();
      }
    };
    const onExit = (code: number | null): void => {
      cleanup();
      reject(new Error(`nats-server exited with code ${String(code)} before it was ready:\n${output}`));
    };
    const cleanup = (): void => {
      clearTimeout(timer);
      child.stderr?.off('data', onData);
      child.stdout?.off('data', onData);
      child.off('exit', onExit);
      // Keep draining output so the pipe never fills and blocks the server.
      child.stderr?.resume();
      child.stdout?.resume();
    };
    child.stderr?.on('data', onData);
    child.stdout?.on('data', onData);
    child.once('exit', onExit);
  });
}

/** Stops a server by pid: SIGTERM, then SIGKILL after 2 s; resolves once it exited. */
export async function stopByPid(child: ChildProcess, pid: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  process.kill(pid, 'SIGTERM');
  const timer = setTimeout(() => {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }, 2_000);
  await exited;
  clearTimeout(timer);
}
