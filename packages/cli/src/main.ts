import { isScopableProject, subjects } from '@baton/protocol/subjects';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { processIo, type CliIo } from './cli-io.ts';
import { parseMetricsAddress, type MetricsAddress } from './daemon/metrics-address.ts';
import { LOG_LEVELS, type LogLevel } from './daemon/log-levels.ts';
import type { WriterKeySource } from './commands/up-command.ts';

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

const DEFAULT_NATS_URL = 'nats://127.0.0.1:4222';
const DEFAULT_DATA_DIR = './.baton';
const DEFAULT_POOL_SIZE = 2;
const DEFAULT_RUNTIME_TIMEOUT_MS = 10_000;
const DEFAULT_GATEWAY_PORT = 8787;

/** The gateway flags `baton up` and `baton gateway` share, as commander parsed them. */
interface GatewayTuningFlags {
  readonly upstreamTimeout?: number;
  readonly rebuiltContext: 'auto' | 'local' | 'remote';
}

function gatewayTuningOf(o: GatewayTuningFlags): { upstreamTimeoutMs?: number; rebuiltContext: 'auto' | 'local' | 'remote' } {
  return { ...(o.upstreamTimeout !== undefined ? { upstreamTimeoutMs: o.upstreamTimeout } : {}), rebuiltContext: o.rebuiltContext };
}

/** A `--passthrough` prefix: a plain path (`/v1/files`), no query, no `//`, no dot segments, nothing encoded. */
function passthroughPrefix(value: string): string {
  if (!/^(\/[A-Za-z0-9_.~-]+)+\/?$/.test(value) || value.split('/').some((s) => s === '.' || s === '..')) throw new InvalidArgumentError('expected a path like /v1/files.');
  return value;
}

/** A duration in seconds (a positive number, fractions allowed), as milliseconds. */
function seconds(value: string): number {
  const n = Number(value);
  if (!/^\s*\d+(\.\d+)?\s*$/.test(value) || !(n > 0)) throw new InvalidArgumentError('expected a number of seconds, e.g. 600 or 0.5.');
  return Math.ceil(n * 1000);
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!/^\s*\d+\s*$/.test(value) || !Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError('expected a positive integer.');
  return n;
}

function natsUrl(value: string): string {
  try {
    const url = new URL(value.includes('://') ? value : `nats://${value}`);
    if (url.hostname === '') throw new Error('no host');
  } catch {
    throw new InvalidArgumentError('expected a NATS URL such as nats://127.0.0.1:4222.');
  }
  return value;
}

/** One or more NATS URLs, comma-separated (the servers of a cluster). */
function natsUrls(value: string): string {
  for (const url of value.split(',')) natsUrl(url.trim());
  return value;
}

/** The NATS security flags of the commands that connect to a cluster (`baton daemon`, `baton cluster status`). */
function natsSecurityOptions(command: Command): Command {
  return command
    .option('--nats-creds <file>', 'NATS credentials file (JWT and NKey seed)')
    .option('--nats-nkey <file>', 'file holding an NKey user seed (SU…), for servers that know users by their public NKey')
    .option('--nats-user <user>', 'NATS user name; the password is read from $BATON_NATS_PASSWORD')
    .option('--nats-tls-ca <file>', 'PEM file of the CA that signed the NATS servers\' certificates (connects with TLS)')
    .option('--nats-tls-cert <file>', 'PEM client certificate for mutual TLS (with --nats-tls-key)')
    .option('--nats-tls-key <file>', 'PEM key of the client certificate')
    .addOption(new Option('--nats-inbox-prefix <prefix>', "subject prefix of this connection's reply inboxes (default _INBOX; a project's NATS user may read its own only)").argParser(subjectPrefix));
}

interface NatsSecurityFlags {
  natsInboxPrefix?: string;
  natsNkey?: string;
  natsCreds?: string;
  natsUser?: string;
  natsTlsCa?: string;
  natsTlsCert?: string;
  natsTlsKey?: string;
}

/** The security flags given, without the ones left out. */
function natsSecurityOf(o: NatsSecurityFlags): NatsSecurityFlags {
  const out: NatsSecurityFlags = {};
  for (const k of ['natsCreds', 'natsUser', 'natsTlsCa', 'natsTlsCert', 'natsTlsKey', 'natsInboxPrefix', 'natsNkey'] as const) if (o[k] !== undefined) out[k] = o[k];
  return out;
}

function projectToken(value: string): string {
  if (!isScopableProject(value)) throw new InvalidArgumentError('expected a project id of letters, digits, _ and - (one subject token).');
  return value;
}

function subjectPrefix(value: string): string {
  try {
    subjects(value);
  } catch {
    throw new InvalidArgumentError('expected dot-separated tokens of letters, digits, _ and -, such as baton or acme.dev.');
  }
  return value;
}

function sessionId(value: string): string {
  try {
    subjects().status(value);
  } catch {
    throw new InvalidArgumentError('expected a session id ([A-Za-z0-9_-], 1 to 128 characters).');
  }
  return value;
}

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

  // Defaults come from `env` (not commander's own `.env()`, which reads `process.env`), so callers can pass theirs.
  const fromEnv = (name: string, fallback: string): string => {
    const value = env[name];
    return value !== undefined && value !== '' ? value : fallback;
  };
  const dataDirOption = (): Option =>
    new Option('--data-dir <dir>', 'data directory (event log in <dir>/events, memory in <dir>/memory)').default(
      fromEnv('BATON_DATA_DIR', DEFAULT_DATA_DIR),
      `$BATON_DATA_DIR, else ${DEFAULT_DATA_DIR}`,
    );

  const metricsOption = (): Option =>
    new Option('--metrics <host:port>', 'serve Prometheus metrics on http://<host:port>/metrics (port 0: any free port, printed)').argParser(parseMetricsAddress);

  natsSecurityOptions(program
    .command('daemon')
    .description('run the daemon: serve protocol v1 on NATS until SIGTERM/SIGINT (model endpoint from OPENAI_BASE_URL / OPENAI_API_KEY)')
    .addOption(
      new Option('--nats <urls>', 'NATS server URL (comma-separated: the servers of a cluster)').default(fromEnv('BATON_NATS_URL', DEFAULT_NATS_URL), `$BATON_NATS_URL, else ${DEFAULT_NATS_URL}`).argParser(natsUrls),
    ))
    .option('--cluster', 'cluster mode: several daemons share the sessions of one NATS cluster (each session held by one daemon at a time)')
    .addOption(new Option('--durability <mode>', 'cluster mode: local (a session stays on its daemon\'s disk) or replicated (every append also in JetStream; another daemon can take the session over)').choices(['local', 'replicated']))
    .addOption(new Option('--replicas <n>', 'cluster mode: replicas of the replicated log and the KV bucket (1 on one server, 3 on a 3-node cluster; default 1)').argParser(positiveInt))
    .addOption(new Option('--lease-ms <ms>', 'cluster mode: a daemon silent this long may have its sessions taken over (default 15000)').argParser(positiveInt))
    .addOption(new Option('--forget-dead-ms <ms>', 'cluster mode: a daemon silent this long is dropped from the cluster\'s listing (its heartbeat deleted; default 600000, at least the lease)').argParser(positiveInt))
    .addOption(dataDirOption())
    .addOption(new Option('--pool-size <n>', 'worker threads hosting session and writer actors').default(DEFAULT_POOL_SIZE).argParser(positiveInt))
    .addOption(new Option('--worker-heap-mb <n>', 'heap limit of each worker thread (a worker past it dies alone: its sessions reload, its writer fails; default 1024)').argParser(positiveInt))
    .option('--writer-model <model>', "model id for writers (default: the session's model)")
    .option('--prefix <prefix>', 'subject prefix (default: baton)')
    .option('--require-scoped-subjects', "serve the project-scoped subjects only (baton.v1.p.<project>.…); the unscoped open and session subjects go unanswered")
    .addOption(new Option('--log-level <level>', 'pino log level (logs go to stderr)').choices(LOG_LEVELS).default('info'))
    .option('--config <file>', 'JSON configuration: budgets, rebuild_caps, tail { min_tokens, max_tokens, min_text_messages }, waits { close_ms, … }')
    .addOption(new Option('--drain-timeout <ms>', 'on SIGTERM/SIGINT, wait this long for running writers before cancelling them').default(120_000).argParser(positiveInt))
    .addOption(new Option('--max-resident-sessions <n>', 'most sessions kept in memory; past it the least recently used idle ones leave (they reload on their next request)').argParser(positiveInt))
    .addOption(new Option('--idle-unload <ms>', 'a session unused for this long leaves memory').default(600_000).argParser(positiveInt))
    .addOption(new Option('--max-queued-requests <n>', 'requests the daemon may have queued over all sessions; past it a request is answered unavailable at once (default 4096; config max_queued_requests)').argParser(positiveInt))
    .addOption(metricsOption())
    .addHelpText('after', '\nEnvironment: OPENAI_BASE_URL and OPENAI_API_KEY (required), BATON_DISABLE_CHECKPOINT=1 disables writers.')
    .action(async (o: { nats: string; dataDir: string; poolSize: number; writerModel?: string; prefix?: string; logLevel: LogLevel; drainTimeout: number; config?: string; maxResidentSessions?: number; idleUnload: number; metrics?: MetricsAddress; cluster?: boolean; durability?: 'local' | 'replicated'; replicas?: number; leaseMs?: number; forgetDeadMs?: number; requireScopedSubjects?: boolean; workerHeapMb?: number; maxQueuedRequests?: number } & NatsSecurityFlags) => {
      setExit(
        await (await daemonCommand()).runDaemon(
          {
            nats: o.nats,
            ...natsSecurityOf(o),
            clusterFlags: {
              ...(o.cluster !== undefined ? { cluster: o.cluster } : {}),
              ...(o.durability !== undefined ? { durability: o.durability } : {}),
              ...(o.replicas !== undefined ? { replicas: o.replicas } : {}),
              ...(o.leaseMs !== undefined ? { leaseMs: o.leaseMs } : {}),
              ...(o.forgetDeadMs !== undefined ? { forgetDeadMs: o.forgetDeadMs } : {}),
            },
            dataDir: o.dataDir,
            poolSize: o.poolSize,
            ...(o.workerHeapMb !== undefined ? { workerHeapMb: o.workerHeapMb } : {}),
            ...(o.maxQueuedRequests !== undefined ? { maxQueuedRequests: o.maxQueuedRequests } : {}),
            logLevel: o.logLevel,
            drainTimeoutMs: o.drainTimeout,
            residency: { idleMs: o.idleUnload, ...(o.maxResidentSessions !== undefined ? { maxResident: o.maxResidentSessions } : {}) },
            ...(o.config !== undefined ? { config: o.config } : {}),
            ...(o.writerModel !== undefined ? { writerModel: o.writerModel } : {}),
            ...(o.prefix !== undefined ? { prefix: o.prefix } : {}),
            ...(o.metrics !== undefined ? { metrics: o.metrics } : {}),
            ...(o.requireScopedSubjects === true ? { requireScopedSubjects: true } : {}),
          },
          env,
          io,
        ),
      );
    });

  const natsOption = (): Option =>
    new Option('--nats <url>', 'NATS server URL').default(fromEnv('BATON_NATS_URL', DEFAULT_NATS_URL), `$BATON_NATS_URL, else ${DEFAULT_NATS_URL}`).argParser(natsUrl);
  const runtimeExits = '\nExit codes: 0 ok, 1 the daemon refused the request, 2 no NATS server or no daemon answering on the prefix.';

  const gatewayOptions = (command: Command): Command =>
    command
      .option('--host <host>', 'address the gateway listens on', '127.0.0.1')
      .addOption(new Option('--port <n>', 'port the gateway listens on (0: any free port)').default(DEFAULT_GATEWAY_PORT).argParser((v) => (v === '0' ? 0 : positiveInt(v))))
      .option('--project <id>', 'project the sessions belong to (a request may say otherwise in x-baton-project)', 'default')
      .addOption(new Option('--context-window <tokens>', 'context window of models the gateway does not know').argParser(positiveInt))
      .addOption(
        new Option('--passthrough <path-prefix>', 'also forward this path and what is below it (e.g. /v1/files; repeatable); other paths than the provider APIs get 404')
          .argParser((v: string, previous: string[] | undefined) => [...(previous ?? []), passthroughPrefix(v)]),
      )
      .addOption(new Option('--upstream-timeout <seconds>', "how long the upstream may take to start its reply, and between parts of it; then the agent gets 504 (default 600: a model may think for long)").argParser(seconds))
      .addOption(
        new Option('--rebuilt-context <where>', "what rebuilt contexts may refer to: local (the daemon's memory files by path), remote (nothing outside the request), auto (local for agents on loopback, remote for others)")
          .choices(['auto', 'local', 'remote'])
          .default('auto'),
      )
      .addOption(new Option('--log-level <level>', 'pino log level (logs go to stderr)').choices(LOG_LEVELS).default('info'))
      .addOption(metricsOption());

  gatewayOptions(
    natsSecurityOptions(program
      .command('gateway')
      .description('an OpenAI-compatible gateway: agents point their base URL at it; requests go to --upstream, conversations are recorded in the daemon over NATS')
      .requiredOption('--upstream <url>', "the provider's base URL, e.g. https://api.openai.com/v1")
      .addOption(new Option('--data-dir <dir>', 'where the gateway keeps its session-ownership secret (gateway-owner.secret; share it with every gateway of the same daemon)').default(fromEnv('BATON_DATA_DIR', DEFAULT_DATA_DIR), `$BATON_DATA_DIR, else ${DEFAULT_DATA_DIR}`))
      .addOption(natsOption())
      .addOption(new Option('--prefix <prefix>', 'subject prefix (default: baton)').argParser(subjectPrefix))),
  ).action(async (o: { upstream: string; dataDir: string; nats: string; prefix?: string; host: string; port: number; project: string; contextWindow?: number; passthrough?: string[]; logLevel: LogLevel; metrics?: MetricsAddress } & GatewayTuningFlags & NatsSecurityFlags) => {
    setExit(
      await (await gatewayCommand()).runGateway(
        {
          upstream: o.upstream,
          dataDir: o.dataDir,
          nats: o.nats,
          ...natsSecurityOf(o),
          host: o.host,
          port: o.port,
          project: o.project,
          logLevel: o.logLevel,
          ...(o.prefix !== undefined ? { prefix: o.prefix } : {}),
          ...(o.contextWindow !== undefined ? { contextWindow: o.contextWindow } : {}),
          ...(o.passthrough !== undefined ? { passthrough: o.passthrough } : {}),
          ...gatewayTuningOf(o),
          ...(o.metrics !== undefined ? { metrics: o.metrics } : {}),
        },
        io,
        env,
      ),
    );
  });

  gatewayOptions(
    natsSecurityOptions(program
      .command('up')
      .description('daemon and gateway in one process (no NATS needed): prints the base URL to give an agent (writers use OPENAI_BASE_URL / OPENAI_API_KEY)')
      .addOption(dataDirOption())
      .option('--upstream <url>', "the provider agents talk to (default: OPENAI_BASE_URL)")
      .addOption(new Option('--nats <url>', 'also serve the daemon on this NATS server').argParser(natsUrl))
      .addOption(new Option('--pool-size <n>', 'worker threads hosting session and writer actors').default(DEFAULT_POOL_SIZE).argParser(positiveInt))
      .addOption(new Option('--inspect <host:port>', 'also serve the read-only web inspector on http://<host:port>/ (port 0: any free port, printed)').argParser(parseMetricsAddress))
      .addOption(
        new Option('--writer-key <whose>', "whose API key writers call the model with: the daemon's (OPENAI_API_KEY), or each agent's own from its latest accepted call (held in memory only)")
          .choices(['daemon', 'agent'])
          .default('daemon'),
      )),
  ).action(async (o: { dataDir: string; upstream?: string; nats?: string; poolSize: number; host: string; port: number; project: string; contextWindow?: number; passthrough?: string[]; logLevel: LogLevel; metrics?: MetricsAddress; inspect?: MetricsAddress; writerKey: WriterKeySource } & GatewayTuningFlags & NatsSecurityFlags) => {
    setExit(
      await (await upCommand()).runUp(
        {
          dataDir: o.dataDir,
          ...natsSecurityOf(o),
          host: o.host,
          port: o.port,
          poolSize: o.poolSize,
          project: o.project,
          logLevel: o.logLevel,
          ...(o.upstream !== undefined ? { upstream: o.upstream } : {}),
          ...(o.nats !== undefined ? { nats: o.nats } : {}),
          ...(o.contextWindow !== undefined ? { contextWindow: o.contextWindow } : {}),
          ...(o.passthrough !== undefined ? { passthrough: o.passthrough } : {}),
          ...gatewayTuningOf(o),
          ...(o.metrics !== undefined ? { metrics: o.metrics } : {}),
          ...(o.inspect !== undefined ? { inspect: o.inspect } : {}),
          writerKey: o.writerKey,
        },
        env,
        io,
      ),
    );
  });

  const cluster = program.command('cluster').description('a cluster of daemons on NATS JetStream');
  natsSecurityOptions(
    cluster
      .command('status')
      .description('the cluster as JetStream holds it: daemons and their heartbeat ages, session owners, the replicated log\'s and KV bucket\'s replicas and lag')
      .addOption(new Option('--nats <urls>', 'NATS server URL (comma-separated: the servers of a cluster)').default(fromEnv('BATON_NATS_URL', DEFAULT_NATS_URL), `$BATON_NATS_URL, else ${DEFAULT_NATS_URL}`).argParser(natsUrls))
      .addOption(new Option('--prefix <prefix>', 'subject prefix (default: baton)').argParser(subjectPrefix))
      .option('--json', 'the status as JSON')
      .addHelpText('after', '\nExit codes: 0 ok, 1 bad options, 2 no NATS server or no cluster on the prefix.'),
  ).action(async (o: { nats: string; prefix?: string; json?: boolean } & NatsSecurityFlags) => {
    setExit(await (await clusterCommand()).runClusterStatus({ nats: o.nats, json: o.json === true, ...natsSecurityOf(o), ...(o.prefix !== undefined ? { prefix: o.prefix } : {}) }, env, io));
  });

  natsSecurityOptions(program
    .command('status')
    .description("a running daemon's overview: sessions (resident, in the log, quarantined), writers, pool, memory, event log, its cluster view")
    .addOption(natsOption()))
    .addOption(new Option('--prefix <prefix>', 'subject prefix (default: baton)').argParser(subjectPrefix))
    .option('--json', 'the runtime.status reply as JSON')
    .addOption(new Option('--timeout <ms>', 'how long to wait for the daemon').default(DEFAULT_RUNTIME_TIMEOUT_MS).argParser(positiveInt))
    .addHelpText('after', `${runtimeExits}\n3 the daemon answered but does not serve yet (starting, or cannot join its cluster: the status says why).`)
    .action(async (o: { nats: string; prefix?: string; json?: boolean; timeout: number } & NatsSecurityFlags) => {
      setExit(await (await runtimeCommand()).runStatus({ nats: o.nats, json: o.json === true, timeoutMs: o.timeout, ...natsSecurityOf(o), ...(o.prefix !== undefined ? { prefix: o.prefix } : {}) }, io, env));
    });

  natsSecurityOptions(program
    .command('sessions')
    .description("a running daemon's sessions: project, resident or not, tokens, usable window, watermark, writer, overflow, closed, last writer outcome")
    .addOption(natsOption()))
    .addOption(new Option('--prefix <prefix>', 'subject prefix (default: baton)').argParser(subjectPrefix))
    .option('--json', 'the runtime.sessions reply as JSON (without --limit: every page joined into one)')
    .addOption(new Option('--limit <n>', 'one page of at most n sessions (default: every session)').argParser(positiveInt))
    .addOption(new Option('--after <session>', 'list the sessions after this id (the previous page\'s next)').argParser(sessionId))
    .addOption(new Option('--project <id>', "that project's sessions only, asked on its own subject (what a project's NATS user may ask)").argParser(projectToken))
    .addOption(new Option('--timeout <ms>', 'how long to wait for each reply').default(DEFAULT_RUNTIME_TIMEOUT_MS).argParser(positiveInt))
    .addHelpText('after', runtimeExits)
    .action(async (o: { nats: string; prefix?: string; json?: boolean; limit?: number; after?: string; timeout: number; project?: string } & NatsSecurityFlags) => {
      setExit(
        await (await runtimeCommand()).runSessions(
          {
            nats: o.nats,
            ...natsSecurityOf(o),
            json: o.json === true,
            timeoutMs: o.timeout,
            ...(o.prefix !== undefined ? { prefix: o.prefix } : {}),
            ...(o.limit !== undefined ? { limit: o.limit } : {}),
            ...(o.after !== undefined ? { after: o.after } : {}),
            ...(o.project !== undefined ? { project: o.project } : {}),
          },
          io,
          env,
        ),
      );
    });

  program
    .command('demo')
    .description('replay a recorded coding session against an embedded daemon and the loopback model (nothing else needed)')
    .addOption(dataDirOption())
    .addOption(new Option('--pool-size <n>', 'worker threads').default(DEFAULT_POOL_SIZE).argParser(positiveInt))
    .action(async (o: { dataDir: string; poolSize: number }) => {
      setExit(await (await demoCommand()).runDemo({ dataDir: o.dataDir, poolSize: o.poolSize }, io));
    });

  program
    .command('rebind')
    .description("a user rotated their API key: bind a gateway session and its slices to the new key (the key comes from BATON_REBIND_KEY, else one line on stdin; run with the daemon stopped)")
    .argument('<session>', 'session id')
    .addOption(dataDirOption())
    .addHelpText('after', '\nExit codes: 0 rebound, 1 refused (a daemon serves the data directory, no key given), 2 unknown session, no event log or no ownership secret.')
    .action(async (session: string, o: { dataDir: string }) => {
      const key = env['BATON_REBIND_KEY'] ?? (await readLine(process.stdin));
      setExit(await (await rebindCommand()).runRebind(session, { dataDir: o.dataDir, key }, io));
    });

  program
    .command('replay')
    .description("print a session's timeline from the event log, or verify that re-folding it reproduces every decision")
    .argument('<session>', 'session id')
    .addOption(dataDirOption())
    .option('--json', 'one JSON object per record (NDJSON); with --verify, the result as one JSON object')
    .option('--verify', 're-fold the session and its writers and report the first divergence (exit 1) instead of printing the timeline')
    .addHelpText('after', '\nExit codes: 0 ok, 1 divergence, 2 unknown session or no event log.')
    .action(async (session: string, o: { dataDir: string; json?: boolean; verify?: boolean }) => {
      setExit(await (await replayCommand()).runReplay(session, { dataDir: o.dataDir, json: o.json === true, verify: o.verify === true }, io));
    });

  program
    .command('inspect')
    .description('serve a read-only web page over the data directory: sessions, token timelines with writer runs and rebuilds, checkpoint diffs, rebuilt contexts (live while a daemon runs on it)')
    .addOption(dataDirOption())
    .option('--host <host>', 'address to listen on (anything but loopback exposes every session)', '127.0.0.1')
    .addOption(new Option('--port <n>', 'port to listen on (0: any free port)').default(0).argParser((v) => (v === '0' ? 0 : positiveInt(v))))
    .addHelpText('after', '\nPrints the URL and runs until SIGTERM/SIGINT. Exit codes: 0 stopped, 1 cannot listen, 2 no event log in the data directory.')
    .action(async (o: { dataDir: string; host: string; port: number }) => {
      setExit(await (await inspectCommand()).runInspect({ dataDir: o.dataDir, host: o.host, port: o.port }, io));
    });

  const memory = program
    .command('memory')
    .description('list, diff and restore the committed versions of memory files (checkpoint.md, MEMORY.md, spillover files)')
    .addHelpText(
      'after',
      '\n<scope>: a session id (its checkpoint.md), project:<id> (its MEMORY.md) or a path relative to <data>/memory.' +
        '\nExit codes: 0 ok, 1 refused or failed, 2 unknown scope, version or event log.',
    );
  const scopeArgument = ['<scope>', 'session id, project:<id>, or a path relative to the memory root'] as const;

  memory
    .command('log')
    .description('list every committed version: number, time, short hash, writer (or restore), size, and which one the live file has')
    .argument(...scopeArgument)
    .addOption(dataDirOption())
    .option('--json', 'the versions as one JSON object')
    .action(async (scope: string, o: { dataDir: string; json?: boolean }) => {
      setExit(await (await memoryCommand()).runMemoryLog(scope, { dataDir: o.dataDir, json: o.json === true }, io));
    });

  memory
    .command('diff')
    .description('unified line diff between two versions; <to> defaults to the live file')
    .argument(...scopeArgument)
    .argument('<from>', 'version number (3 or v3), or live')
    .argument('[to]', 'version number, or live (default)')
    .addOption(dataDirOption())
    .action(async (scope: string, from: string, to: string | undefined, o: { dataDir: string }) => {
      setExit(await (await memoryCommand()).runMemoryDiff(scope, from, to, { dataDir: o.dataDir }, io));
    });

  memory
    .command('restore')
    .description('commit a version again as the newest one (reason "restore": history is never rewritten)')
    .argument(...scopeArgument)
    .argument('<version>', 'version number (3 or v3)')
    .addOption(dataDirOption())
    .addHelpText(
      'after',
      '\nRefused while `baton daemon` runs on the data directory (the event log takes one writing process at a time).' +
        '\nA writer of the session that commits after the restore (e.g. once the daemon runs again) makes its own version the newest.',
    )
    .action(async (scope: string, version: string, o: { dataDir: string }) => {
      setExit(await (await memoryCommand()).runMemoryRestore(scope, version, { dataDir: o.dataDir }, io));
    });

  return program;
}

/**
 * Runs the `baton` CLI with `process.argv`-shaped arguments and returns the exit code. Environment variables are read
 * here (and only in this package).
 */
export async function main(argv: string[], io: CliIo = processIo, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let exitCode = 0;
  const program = buildProgram(io, env, (code) => {
    exitCode = code;
  });
  try {
    await program.parseAsync(argv);
    return exitCode;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode;
    io.err(`baton: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
}
