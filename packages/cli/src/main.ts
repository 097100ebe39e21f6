import { Command, CommanderError } from 'commander';
import { processIo, type CliIo } from './cli-io.ts';
import { EXIT, exitCodesHelp } from './exit-codes.ts';
import { CLUSTER } from './flags/flag-catalogue.ts';
import {
  CLUSTER_STATUS_FLAGS,
  DAEMON_FLAGS,
  DATA_DIR_FLAGS,
  DEMO_FLAGS,
  GATEWAY_FLAGS,
  HANDOFF_FLAGS,
  INSPECT_FLAGS,
  MEMORY_LOG_FLAGS,
  REPLAY_FLAGS,
  SESSIONS_FLAGS,
  STATUS_FLAGS,
  UP_FLAGS,
} from './flags/command-flags.ts';
import { envName } from './flags/settings-table.ts';
import { flagValues, spelledAs, withFlags } from './flags/use-flags.ts';

// Each command's module (and what it pulls in: the runtime, lmdb, piscina, the gateway, …) is imported when that
// command runs, so `baton --help` or a parse error loads only commander and the protocol's subject names.
const daemonCommand = () => import('./commands/daemon-command.ts');
const demoCommand = () => import('./commands/demo-command.ts');
const gatewayCommand = () => import('./commands/gateway-command.ts');
const upCommand = () => import('./commands/up-command.ts');
const memoryCommand = () => import('./commands/memory-command.ts');
const replayCommand = () => import('./commands/replay-command.ts');
const rebindCommand = () => import('./commands/rebind-command.ts');
const inspectCommand = () => import('./commands/inspect-command.ts');
const runtimeCommand = () => import('./commands/runtime-command.ts');
const clusterCommand = () => import('./commands/cluster-command.ts');
const handoffCommand = () => import('./commands/handoff-command.ts');

/** What the codes mean for the commands that connect to NATS (the table is `exit-codes.ts`, also in the README). */
const CONNECTING_EXITS = {
  ok: 'ok',
  failed: 'failed or refused (bad flags or configuration included)',
  notFound: 'not found (no NATS server, no daemon or cluster answering, unknown session, no event log)',
} as const;
const EXITS = exitCodesHelp(CONNECTING_EXITS);

/** The first line of a stream ('' when it ends first, or is a terminal nobody types into). */
async function readLine(stream: NodeJS.ReadStream): Promise<string> {
  if (stream.isTTY === true) return '';
  let text = '';
  for await (const chunk of stream) {
    text += String(chunk);
    if (text.includes('\n')) break;
  }
  return text.split('\n')[0] ?? '';
}

/** Builds the `baton` program; `setExit` receives each command's exit code. */
export function buildProgram(io: CliIo, env: NodeJS.ProcessEnv, setExit: (code: number) => void): Command {
  const program = new Command('baton')
    .description('Baton: checkpoints and memory for long-running coding agents, as a daemon on NATS.')
    .configureOutput({ writeOut: (s) => io.out(s.replace(/\n$/, '')), writeErr: (s) => io.err(s.replace(/\n$/, '')) })
    .exitOverride();
  const DURATIONS = '\nDurations take a unit: 500ms, 15s, 10m, 1h.';

  withFlags(
    program
      .command('daemon')
      .description('run the daemon: serve protocol v1 on NATS until SIGTERM/SIGINT (model endpoint from OPENAI_BASE_URL / OPENAI_API_KEY)')
      .addHelpText('after', `\nEnvironment: OPENAI_BASE_URL and OPENAI_API_KEY (required), BATON_DISABLE_CHECKPOINT=1 disables writers.${DURATIONS}${EXITS}`),
    DAEMON_FLAGS,
    env,
  ).action(async (_o: unknown, cmd: Command) => {
    const spelled = { lease: spelledAs(cmd, CLUSTER.lease), forgetDead: spelledAs(cmd, CLUSTER.forgetDead) };
    setExit(await (await daemonCommand()).runDaemon({ ...flagValues(cmd, DAEMON_FLAGS), spelled }, env, io));
  });

  withFlags(
    program
      .command('gateway')
      .description('an OpenAI-compatible gateway: agents point their base URL at it; requests go to --upstream, conversations are recorded in the daemon over NATS')
      .addHelpText('after', `${DURATIONS}${EXITS}`),
    GATEWAY_FLAGS,
    env,
  ).action(async (_o: unknown, cmd: Command) => {
    setExit(await (await gatewayCommand()).runGateway(flagValues(cmd, GATEWAY_FLAGS), io, env));
  });

  withFlags(
    program
      .command('up')
      .description('daemon and gateway in one process (no NATS needed): prints the base URL to give an agent (writers use OPENAI_BASE_URL / OPENAI_API_KEY)')
      .addHelpText('after', `${DURATIONS}${EXITS}`),
    UP_FLAGS,
    env,
  ).action(async (_o: unknown, cmd: Command) => {
    setExit(await (await upCommand()).runUp(flagValues(cmd, UP_FLAGS), env, io));
  });

  const cluster = program.command('cluster').description('a cluster of daemons on NATS JetStream');
  withFlags(
    cluster
      .command('status')
      .description("the cluster as JetStream holds it: daemons and their heartbeat ages, session owners, the replicated log's and KV bucket's replicas and lag")
      .addHelpText('after', EXITS),
    CLUSTER_STATUS_FLAGS,
    env,
  ).action(async (_o: unknown, cmd: Command) => {
    setExit(await (await clusterCommand()).runClusterStatus(flagValues(cmd, CLUSTER_STATUS_FLAGS), env, io));
  });

  withFlags(
    program
      .command('status')
      .description("a running daemon's overview: sessions (resident, in the log, quarantined), writers, pool, memory, event log, its cluster view")
      .addHelpText('after', `${DURATIONS}${exitCodesHelp({ ...CONNECTING_EXITS, notServing: 'the daemon answered but does not serve yet (starting, or cannot join its cluster: the status says why)' })}`),
    STATUS_FLAGS,
    env,
  ).action(async (_o: unknown, cmd: Command) => {
    setExit(await (await runtimeCommand()).runStatus(flagValues(cmd, STATUS_FLAGS), io, env));
  });

  withFlags(
    program
      .command('sessions')
      .description("a running daemon's sessions: project, resident or not, tokens, usable window, watermark, writer, overflow, closed, last writer outcome")
      .addHelpText('after', `${DURATIONS}${EXITS}`),
    SESSIONS_FLAGS,
    env,
  ).action(async (_o: unknown, cmd: Command) => {
    setExit(await (await runtimeCommand()).runSessions(flagValues(cmd, SESSIONS_FLAGS), io, env));
  });

  withFlags(
    program
      .command('handoff')
      .description('continue a session in another agent: prints a one-time handoff base URL for the gateway (the new agent gets the session rebuilt in its API)')
      .argument('<session>', 'session id')
      .addHelpText('after', `${DURATIONS}${exitCodesHelp({ ok: 'printed the handoff base URL', failed: 'the daemon refused (nothing to hand off, a bad flag)', notFound: 'no NATS server or daemon answering, or an unknown session' })}`),
    HANDOFF_FLAGS,
    env,
  ).action(async (session: string, _o: unknown, cmd: Command) => {
    setExit(await (await handoffCommand()).runHandoff(session, flagValues(cmd, HANDOFF_FLAGS), io, env));
  });

  withFlags(
    program
      .command('demo')
      .description('replay a recorded coding session against an embedded daemon and the loopback model (nothing else needed)')
      .addHelpText('after', exitCodesHelp({ ok: 'done', failed: 'failed' })),
    DEMO_FLAGS,
    env,
  ).action(
    async (_o: unknown, cmd: Command) => {
      setExit(await (await demoCommand()).runDemo(flagValues(cmd, DEMO_FLAGS), io));
    },
  );

  withFlags(
    program
      .command('rebind')
      .description("a user rotated their API key: bind a gateway session and its slices to the new key (the key comes from BATON_REBIND_KEY, else one line on stdin; run with the daemon stopped)")
      .argument('<session>', 'session id')
      .addHelpText('after', exitCodesHelp({ ok: 'rebound', failed: 'refused (a daemon serves the data directory, no key given)', notFound: 'unknown session, no event log or no ownership secret' })),
    DATA_DIR_FLAGS,
    env,
  ).action(async (session: string, _o: unknown, cmd: Command) => {
    // Set but empty counts as given (and is refused as no key), as it always has.
    const key = env[envName('rebindKey')] ?? (await readLine(process.stdin));
    setExit(await (await rebindCommand()).runRebind(session, { ...flagValues(cmd, DATA_DIR_FLAGS), key }, io));
  });

  withFlags(
    program
      .command('replay')
      .description("print a session's timeline from the event log, or verify that re-folding it reproduces every decision")
      .argument('<session>', 'session id')
      .addHelpText('after', exitCodesHelp({ ok: 'ok', failed: 'divergence', notFound: 'unknown session or no event log' })),
    REPLAY_FLAGS,
    env,
  ).action(async (session: string, _o: unknown, cmd: Command) => {
    const o = flagValues(cmd, REPLAY_FLAGS);
    setExit(await (await replayCommand()).runReplay(session, { dataDir: o.dataDir, json: o.json === true, verify: o.verify === true }, io));
  });

  withFlags(
    program
      .command('inspect')
      .description('serve a read-only web page over the data directory: sessions, token timelines with writer runs and rebuilds, checkpoint diffs, rebuilt contexts (live while a daemon runs on it)')
      .addHelpText('after', `\nPrints the URL and runs until SIGTERM/SIGINT.${exitCodesHelp({ ok: 'stopped', failed: 'cannot listen', notFound: 'no event log in the data directory' })}`),
    INSPECT_FLAGS,
    env,
  ).action(async (_o: unknown, cmd: Command) => {
    setExit(await (await inspectCommand()).runInspect(flagValues(cmd, INSPECT_FLAGS), io));
  });

  // Each subcommand's help says it too: `memory log --help` does not print its parent's.
  const MEMORY_EXITS = exitCodesHelp({ ok: 'ok', failed: 'refused or failed', notFound: 'unknown scope, version or event log' });
  const memory = program
    .command('memory')
    .description('list, diff and restore the committed versions of memory files (checkpoint.md, MEMORY.md, spillover files)')
    .addHelpText('after', `\n<scope>: a session id (its checkpoint.md), project:<id> (its MEMORY.md) or a path relative to <data>/memory.${MEMORY_EXITS}`);
  const scopeArgument = ['<scope>', 'session id, project:<id>, or a path relative to the memory root'] as const;

  withFlags(
    memory
      .command('log')
      .description('list every committed version: number, time, short hash, writer (or restore), size, and which one the live file has')
      .argument(...scopeArgument)
      .addHelpText('after', MEMORY_EXITS),
    MEMORY_LOG_FLAGS,
    env,
  ).action(async (scope: string, _o: unknown, cmd: Command) => {
    const o = flagValues(cmd, MEMORY_LOG_FLAGS);
    setExit(await (await memoryCommand()).runMemoryLog(scope, { dataDir: o.dataDir, json: o.json === true }, io));
  });

  withFlags(
    memory
      .command('diff')
      .description('unified line diff between two versions; <to> defaults to the live file')
      .argument(...scopeArgument)
      .argument('<from>', 'version number (3 or v3), or live')
      .argument('[to]', 'version number, or live (default)')
      .addHelpText('after', MEMORY_EXITS),
    DATA_DIR_FLAGS,
    env,
  ).action(async (scope: string, from: string, to: string | undefined, _o: unknown, cmd: Command) => {
    setExit(await (await memoryCommand()).runMemoryDiff(scope, from, to, flagValues(cmd, DATA_DIR_FLAGS), io));
  });

  withFlags(
    memory
      .command('restore')
      .description('commit a version again as the newest one (reason "restore": history is never rewritten)')
      .argument(...scopeArgument)
      .argument('<version>', 'version number (3 or v3)')
      .addHelpText(
        'after',
        '\nRefused while `baton daemon` runs on the data directory (the event log takes one writing process at a time).' +
          '\nA writer of the session that commits after the restore (e.g. once the daemon runs again) makes its own version the newest.' +
          MEMORY_EXITS,
      ),
    DATA_DIR_FLAGS,
    env,
  ).action(async (scope: string, version: string, _o: unknown, cmd: Command) => {
    setExit(await (await memoryCommand()).runMemoryRestore(scope, version, flagValues(cmd, DATA_DIR_FLAGS), io));
  });

  return program;
}

/**
 * Runs the `baton` CLI with `process.argv`-shaped arguments and returns the exit code. Environment variables are read
 * here (and only in this package).
 */
export async function main(argv: string[], io: CliIo = processIo, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let exitCode: number = EXIT.ok;
  const program = buildProgram(io, env, (code) => {
    exitCode = code;
  });
  try {
    await program.parseAsync(argv);
    return exitCode;
  } catch (err) {
    // Commander exits 0 after --help and 1 on a flag it refuses: the table's ok and failed.
    if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.ok : EXIT.failed;
    io.err(`baton: ${err instanceof Error ? err.message : String(err)}`);
    return EXIT.failed;
  }
}
