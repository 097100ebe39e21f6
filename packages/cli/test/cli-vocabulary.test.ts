import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startNatsServer } from '@baton/testing';
import { Command } from 'commander';
import { afterAll, describe, expect, it } from 'vitest';
import { EXIT } from '../src/exit-codes.ts';
import { CLUSTER, NATS } from '../src/flags/flag-catalogue.ts';
import { duration } from '../src/flags/flag-parsers.ts';
import { flagValues, withFlags } from '../src/flags/use-flags.ts';
import { buildProgram, main } from '../src/main.ts';
import { captureIo } from './helpers/capture-io.ts';
import { childEnv, completion, spawnBaton } from './helpers/run-baton.ts';

/**
 * The command line speaks one vocabulary: flags come from one catalogue (so a flag means the same on every command),
 * durations take units, every command that connects to NATS has the same connection flags, and a failed connection
 * exits with the same code everywhere.
 */

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'baton-cli-vocabulary-'));
  dirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Writers are never called here: the model URL only has to be well-formed. */
const MODEL_ENV = { OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', OPENAI_API_KEY: 'test' };

async function run(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string[]; stderr: string[] }> {
  const io = captureIo();
  const code = await main(['node', 'baton', ...args], io, env);
  return { code, stdout: io.stdout, stderr: io.stderr };
}

/** The long names of a command's flags, hidden ones included, as commander holds them. */
function longFlags(path: string[]): { visible: string[]; hidden: string[] } {
  let command: Command = buildProgram(captureIo(), {}, () => {});
  for (const name of path) {
    const next = command.commands.find((c) => c.name() === name);
    if (next === undefined) throw new Error(`no command ${path.join(' ')}`);
    command = next;
  }
  const options = command.options as readonly { long?: string; hidden: boolean }[];
  return { visible: options.filter((o) => !o.hidden).map((o) => o.long ?? ''), hidden: options.filter((o) => o.hidden).map((o) => o.long ?? '') };
}

const CONNECTING = [['daemon'], ['gateway'], ['up'], ['status'], ['sessions'], ['cluster', 'status']];

describe('one CLI vocabulary', () => {
  it('reads durations with a unit, and a bare number in the unit the flag had before', () => {
    const ms = duration('ms');
    expect([ms('500ms'), ms('15s'), ms('1.5s'), ms('10m'), ms('1h'), ms('2000')]).toEqual([500, 15_000, 1500, 600_000, 3_600_000, 2000]);
    expect(duration('s')('600')).toBe(600_000);
    for (const bad of ['0', '0s', '-1s', '10x', 's', '', '1e3']) expect(() => ms(bad), bad).toThrow(/expected a duration/);
  });

  it('gives the older spelling of a renamed flag the same key and value, and hides it from help', () => {
    const parse = (args: string[]): unknown => {
      const command = withFlags(new Command('probe').exitOverride(), [CLUSTER.lease, CLUSTER.forgetDead], {});
      command.parse(args, { from: 'user' });
      return flagValues(command, [CLUSTER.lease, CLUSTER.forgetDead]);
    };
    expect(parse(['--lease-ms', '2000', '--forget-dead-ms', '600000'])).toEqual({ lease: 2000, forgetDead: 600_000 });
    expect(parse(['--lease', '2s', '--forget-dead', '10m'])).toEqual({ lease: 2000, forgetDead: 600_000 });
    expect(parse([])).toEqual({});
    const daemon = longFlags(['daemon']);
    expect(daemon.visible).toEqual(expect.arrayContaining(['--lease', '--forget-dead']));
    expect(daemon.hidden).toEqual(['--lease-ms', '--forget-dead-ms']);
  });

  it('names the flag as it was spelled when refusing it', async () => {
    expect(await run(['daemon', '--lease', '2s', '--data-dir', tempDir()], MODEL_ENV)).toMatchObject({ code: EXIT.failed, stderr: ['baton daemon: --lease needs --cluster'] });
    expect(await run(['daemon', '--forget-dead-ms', '2000', '--data-dir', tempDir()], MODEL_ENV)).toMatchObject({ code: EXIT.failed, stderr: ['baton daemon: --forget-dead-ms needs --cluster'] });
  });

  it('gives every command that connects to NATS the same connection flags', () => {
    const connection = Object.values(NATS).map((f) => f.spec.flags.split(' ')[0]);
    expect(connection).toEqual(expect.arrayContaining(['--nats', '--prefix', '--nats-creds', '--nats-nkey', '--nats-user', '--nats-tls-ca', '--nats-tls-cert', '--nats-tls-key', '--nats-inbox-prefix']));
    for (const path of CONNECTING) expect(longFlags(path).visible, path.join(' ')).toEqual(expect.arrayContaining(connection));
  });

  it("gives up the daemon's configuration, residency, writer, queue and drain flags", () => {
    const up = longFlags(['up']).visible;
    const shared = ['--data-dir', '--config', '--pool-size', '--worker-heap-mb', '--writer-model', '--max-resident-sessions', '--idle-unload', '--max-queued-requests', '--drain-timeout', '--require-scoped-subjects', '--log-level', '--metrics'];
    expect(longFlags(['daemon']).visible).toEqual(expect.arrayContaining(shared));
    expect(up).toEqual(expect.arrayContaining(shared));
  });

  it('refuses an invalid --config on up as the daemon does', async () => {
    const config = join(tempDir(), 'baton.json');
    writeFileSync(config, JSON.stringify({ tail: { min_tokens: 10, max_tokens: 5, min_text_messages: 1 } }));
    const daemon = await run(['daemon', '--config', config, '--nats', `nats://127.0.0.1:${await freePort()}`, '--data-dir', tempDir()], MODEL_ENV);
    const up = await run(['up', '--config', config, '--data-dir', tempDir()], MODEL_ENV);
    // The daemon connects before it reads its configuration; up reads it first (nothing to connect to).
    expect(daemon.code).toBe(EXIT.notFound);
    expect(up).toMatchObject({ code: EXIT.failed, stderr: [`baton up: invalid configuration ${config}: tail.max_tokens: max_tokens must be at least min_tokens`] });
  });

  it('exits 2 from every command when no NATS server listens at the URL', async () => {
    const url = `nats://127.0.0.1:${await freePort()}`;
    const runs: [string, Awaited<ReturnType<typeof run>>][] = [];
    for (const args of [
      ['daemon', '--data-dir', tempDir()],
      ['gateway', '--upstream', 'http://127.0.0.1:9/v1', '--data-dir', tempDir()],
      ['up', '--data-dir', tempDir()],
      ['status'],
      ['sessions'],
      ['cluster', 'status'],
    ]) {
      runs.push([args[0] === 'cluster' ? 'cluster status' : (args[0] ?? ''), await run([...args, '--nats', url], MODEL_ENV)]);
    }
    for (const [command, r] of runs) {
      expect(r.code, command).toBe(EXIT.notFound);
      expect(r.stderr, command).toEqual([expect.stringMatching(new RegExp(`^baton ${command}: cannot connect to NATS at ${url}: `))]);
    }
  });

  it('refuses a NATS option that cannot be used with 1 from every command, before connecting', async () => {
    for (const args of [['daemon', '--data-dir', tempDir()], ['gateway', '--upstream', 'http://127.0.0.1:9/v1', '--data-dir', tempDir()], ['up', '--nats', 'nats://127.0.0.1:4222', '--data-dir', tempDir()], ['status'], ['sessions'], ['cluster', 'status']]) {
      const r = await run([...args, '--nats-tls-cert', '/x.pem'], MODEL_ENV);
      expect(r.code, args[0]).toBe(EXIT.failed);
      expect(r.stderr, args[0]).toEqual([expect.stringMatching(/--nats-tls-cert and --nats-tls-key go together$/)]);
    }
  });
});

describe('baton up on NATS', () => {
  it('serves on its --prefix with the daemon flags it shares with baton daemon, and drains on SIGTERM', { timeout: 60_000 }, async () => {
    const nats = await startNatsServer();
    try {
      const config = join(tempDir(), 'baton.json');
      writeFileSync(config, JSON.stringify({ max_queued_per_session: 8 }));
      const args = ['up', '--nats', nats.url, '--prefix', 'upx', '--port', '0', '--data-dir', tempDir(), '--config', config];
      const child = spawnBaton([...args, '--max-resident-sessions', '4', '--idle-unload', '5m', '--drain-timeout', '5s', '--log-level', 'warn'], childEnv(MODEL_ENV));
      const done = completion(child);
      await new Promise<void>((resolve, reject) => {
        let out = '';
        child.stdout?.on('data', (d: Buffer) => {
          out += d.toString();
          if (out.includes('base URL: ')) resolve();
        });
        child.once('exit', () => reject(new Error(`baton up exited: ${out}`)));
      });
      const served = await run(['status', '--nats', nats.url, '--prefix', 'upx', '--json']);
      expect(served.code).toBe(EXIT.ok);
      expect(JSON.parse(served.stdout[0] ?? '{}')).toMatchObject({ ok: true, serving: true });
      expect((await run(['status', '--nats', nats.url])).code).toBe(EXIT.notFound);
      child.kill('SIGTERM');
      expect((await done).code).toBe(EXIT.ok);
    } finally {
      await nats.stop();
    }
  });
});
