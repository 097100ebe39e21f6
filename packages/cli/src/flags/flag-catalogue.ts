import type { Durability } from '@baton/runtime';
import { LOG_LEVELS, type LogLevel } from '../daemon/log-levels.ts';
import { parseMetricsAddress, type MetricsAddress } from '../daemon/metrics-address.ts';
import { flag, type FlagEnv } from './flag.ts';
import { duration, natsUrls, passthroughPrefix, port, positiveInt, projectToken, sessionId, subjectPrefix } from './flag-parsers.ts';
import { envName, envValue, type EnvSetting } from './settings-table.ts';

/**
 * Every flag of `baton`, declared once: its key in the parsed options (the setting's name in `settings-table.ts`), text,
 * help, parser and default. Commands take their flags from here (see `command-flags.ts`), rewording the help or
 * changing the default where their use differs.
 * Durations are milliseconds once parsed and take a unit on the command line (`500ms`, `15s`, `10m`, `1h`).
 */

const DEFAULT_NATS_URL = 'nats://127.0.0.1:4222';
const DEFAULT_DATA_DIR = './.baton';

/** The setting's variable from the environment, unless unset or empty. */
function fromEnv(env: FlagEnv, name: EnvSetting, fallback: string): string {
  return envValue(env, name) ?? fallback;
}

/** The NATS connection: servers, the ways to authenticate, TLS, reply inboxes, and the subject prefix. */
export const NATS = {
  nats: flag('nats', { flags: '--nats <urls>', help: 'NATS server URL (comma-separated: the servers of a cluster)', parse: natsUrls }).default(
    (env) => fromEnv(env, 'nats', DEFAULT_NATS_URL),
    `$${envName('nats')}, else ${DEFAULT_NATS_URL}`,
  ),
  prefix: flag('prefix', { flags: '--prefix <prefix>', help: 'subject prefix (default: baton)', parse: subjectPrefix }),
  natsCreds: flag('natsCreds', { flags: '--nats-creds <file>', help: 'NATS credentials file (JWT and NKey seed)' }),
  natsNkey: flag('natsNkey', { flags: '--nats-nkey <file>', help: 'file holding an NKey user seed (SU…), for servers that know users by their public NKey' }),
  natsUser: flag('natsUser', { flags: '--nats-user <user>', help: `NATS user name; the password is read from $${envName('natsPassword')}` }),
  natsTlsCa: flag('natsTlsCa', { flags: '--nats-tls-ca <file>', help: "PEM file of the CA that signed the NATS servers' certificates (connects with TLS)" }),
  natsTlsCert: flag('natsTlsCert', { flags: '--nats-tls-cert <file>', help: 'PEM client certificate for mutual TLS (with --nats-tls-key)' }),
  natsTlsKey: flag('natsTlsKey', { flags: '--nats-tls-key <file>', help: 'PEM key of the client certificate' }),
  natsInboxPrefix: flag('natsInboxPrefix', {
    flags: '--nats-inbox-prefix <prefix>',
    help: "subject prefix of this connection's reply inboxes (default _INBOX; a project's NATS user may read its own only)",
    parse: subjectPrefix,
  }),
} as const;

/** Where the data lives, logging and metrics. */
export const COMMON = {
  dataDir: flag('dataDir', { flags: '--data-dir <dir>', help: 'data directory (event log in <dir>/events, memory in <dir>/memory)' }).default(
    (env) => fromEnv(env, 'dataDir', DEFAULT_DATA_DIR),
    `$${envName('dataDir')}, else ${DEFAULT_DATA_DIR}`,
  ),
  logLevel: flag<'logLevel', LogLevel>('logLevel', { flags: '--log-level <level>', help: 'pino log level (logs go to stderr)', choices: LOG_LEVELS }).default('info'),
  metrics: flag<'metrics', MetricsAddress>('metrics', {
    flags: '--metrics <host:port>',
    help: 'serve Prometheus metrics on http://<host:port>/metrics (port 0: any free port, printed)',
    parse: parseMetricsAddress,
  }),
  json: flag<'json', boolean>('json', { flags: '--json', help: 'the result as JSON' }),
  host: flag('host', { flags: '--host <host>', help: 'address to listen on' }).default('127.0.0.1'),
  port: flag('port', { flags: '--port <n>', help: 'port to listen on (0: any free port)', parse: port }),
  timeout: flag('timeout', {
    flags: '--timeout <duration>',
    help: 'how long to wait for the daemon (a bare number: milliseconds)',
    parse: duration('ms'),
  }).default(10_000, '10s'),
} as const;

/** The daemon: workers, writers, residency, configuration, shutdown. `baton daemon` and `baton up` share these. */
export const DAEMON = {
  poolSize: flag('poolSize', { flags: '--pool-size <n>', help: 'worker threads hosting session and writer actors', parse: positiveInt }).default(2),
  workerHeapMb: flag('workerHeapMb', {
    flags: '--worker-heap-mb <n>',
    help: 'heap limit of each worker thread (a worker past it dies alone: its sessions reload, its writer fails; default 1024)',
    parse: positiveInt,
  }),
  writerModel: flag('writerModel', { flags: '--writer-model <model>', help: "model id for writers (default: the session's model)" }),
  config: flag('config', { flags: '--config <file>', help: 'JSON configuration: budgets, rebuild_caps, tail { min_tokens, max_tokens, min_text_messages }, waits { close_ms, … }' }),
  drainTimeout: flag('drainTimeout', {
    flags: '--drain-timeout <duration>',
    help: 'on SIGTERM/SIGINT, wait this long for running writers before cancelling them (a bare number: milliseconds)',
    parse: duration('ms'),
  }).default(120_000, '2m'),
  maxResidentSessions: flag('maxResidentSessions', {
    flags: '--max-resident-sessions <n>',
    help: 'most sessions kept in memory; past it the least recently used idle ones leave (they reload on their next request)',
    parse: positiveInt,
  }),
  idleUnload: flag('idleUnload', {
    flags: '--idle-unload <duration>',
    help: 'a session unused for this long leaves memory (a bare number: milliseconds)',
    parse: duration('ms'),
  }).default(600_000, '10m'),
  maxQueuedRequests: flag('maxQueuedRequests', {
    flags: '--max-queued-requests <n>',
    help: 'requests the daemon may have queued over all sessions; past it a request is answered unavailable at once (default 4096; config max_queued_requests)',
    parse: positiveInt,
  }),
  handoffTtl: flag('handoffTtl', {
    flags: '--handoff-ttl <duration>',
    help: 'how long a handoff token lives unless `baton handoff --ttl` says (default 24h)',
    parse: duration('ms'),
  }),
  requireScopedSubjects: flag<'requireScopedSubjects', boolean>('requireScopedSubjects', {
    flags: '--require-scoped-subjects',
    help: 'serve the project-scoped subjects only (baton.v1.p.<project>.…); the unscoped open and session subjects go unanswered',
  }),
} as const;

/** Cluster mode of `baton daemon`. */
export const CLUSTER = {
  cluster: flag<'cluster', boolean>('cluster', {
    flags: '--cluster',
    help: 'cluster mode: several daemons share the sessions of one NATS cluster (each session held by one daemon at a time)',
  }),
  durability: flag<'durability', Durability>('durability', {
    flags: '--durability <mode>',
    help: "cluster mode: local (a session stays on its daemon's disk) or replicated (every append also in JetStream; another daemon can take the session over)",
    choices: ['local', 'replicated'],
  }),
  replicas: flag('replicas', {
    flags: '--replicas <n>',
    help: 'cluster mode: replicas of the replicated log and the KV bucket (1 on one server, 3 on a 3-node cluster; default 1)',
    parse: positiveInt,
  }),
  lease: flag('lease', {
    flags: '--lease <duration>',
    help: 'cluster mode: a daemon silent this long may have its sessions taken over (default 15s)',
    parse: duration('ms'),
    aliases: [{ flags: '--lease-ms <ms>', parse: duration('ms') }],
  }),
  forgetDead: flag('forgetDead', {
    flags: '--forget-dead <duration>',
    help: "cluster mode: a daemon silent this long is dropped from the cluster's listing (its heartbeat deleted; default 10m, at least the lease)",
    parse: duration('ms'),
    aliases: [{ flags: '--forget-dead-ms <ms>', parse: duration('ms') }],
  }),
} as const;

/** The gateway in front of the agents: `baton gateway` and `baton up`. */
export const GATEWAY = {
  upstream: flag('upstream', { flags: '--upstream <url>', help: "the provider's base URL, e.g. https://api.openai.com/v1" }),
  project: flag('project', { flags: '--project <id>', help: 'project the sessions belong to (a request may say otherwise in x-baton-project)' }).default('default'),
  contextWindow: flag('contextWindow', { flags: '--context-window <tokens>', help: 'context window of models the gateway does not know', parse: positiveInt }),
  passthrough: flag<'passthrough', string[]>('passthrough', {
    flags: '--passthrough <path-prefix>',
    help: 'also forward this path and what is below it (e.g. /v1/files; repeatable); other paths than the provider APIs get 404',
    parse: (raw, previous) => [...(previous ?? []), passthroughPrefix(raw)],
  }),
  upstreamTimeout: flag('upstreamTimeout', {
    flags: '--upstream-timeout <duration>',
    help: 'how long the upstream may take to start its reply, and between parts of it; then the agent gets 504 (default 10m: a model may think for long; a bare number: seconds)',
    parse: duration('s'),
  }),
  rebuiltContext: flag<'rebuiltContext', 'auto' | 'local' | 'remote'>('rebuiltContext', {
    flags: '--rebuilt-context <where>',
    help: "what rebuilt contexts may refer to: local (the daemon's memory files by path), remote (nothing outside the request), auto (local for agents on loopback, remote for others)",
    choices: ['auto', 'local', 'remote'],
  }).default('auto'),
  resumeEmpty: flag<'resumeEmpty', boolean>('resumeEmpty', {
    flags: '--resume-empty',
    help: "an agent that starts over on a session name with an empty history (a fresh process after a crash) gets the session's rebuilt context inserted, not a blank slice",
  }),
  inspect: flag<'inspect', MetricsAddress>('inspect', {
    flags: '--inspect <host:port>',
    help: 'also serve the read-only web inspector on http://<host:port>/ (port 0: any free port, printed)',
    parse: parseMetricsAddress,
  }),
  writerKey: flag<'writerKey', 'daemon' | 'agent'>('writerKey', {
    flags: '--writer-key <whose>',
    help: "whose API key writers call the model with: the daemon's (OPENAI_API_KEY), or each agent's own from its latest accepted call (held in memory only)",
    choices: ['daemon', 'agent'],
  }).default('daemon'),
} as const;

/** `baton sessions` paging and scope. */
export const LISTING = {
  limit: flag('limit', { flags: '--limit <n>', help: 'one page of at most n sessions (default: every session)', parse: positiveInt }),
  after: flag('after', { flags: '--after <session>', help: "list the sessions after this id (the previous page's next)", parse: sessionId }),
  project: flag('project', { flags: '--project <id>', help: "that project's sessions only, asked on its own subject (what a project's NATS user may ask)", parse: projectToken }),
} as const;

/** `baton handoff`: what the new agent runs on, and where its gateway is. */
export const HANDOFF = {
  to: flag<'to', 'openai-chat' | 'openai-responses' | 'anthropic-messages'>('to', {
    flags: '--to <api>',
    help: "the new agent's API (default: the session's): openai-chat (pi), openai-responses (Codex), anthropic-messages (Claude Code)",
    choices: ['openai-chat', 'openai-responses', 'anthropic-messages'],
  }),
  model: flag('model', { flags: '--model <id>', help: "the new agent's model (default: the session's)" }),
  window: flag('window', { flags: '--window <tokens>', help: "the new model's context window, which the handed context is fitted to (default: the session's)", parse: positiveInt }),
  gateway: flag('gateway', { flags: '--gateway <url>', help: 'the gateway the new agent talks to (its origin)' }).default('http://127.0.0.1:8787'),
  wait: flag('wait', {
    flags: '--wait <duration>',
    help: "how long to wait for the session's running writer before using its last checkpoint (default 30s)",
    parse: duration('ms'),
  }),
  ttl: flag('ttl', { flags: '--ttl <duration>', help: "how long the token lives (default: the daemon's, 24h)", parse: duration('ms') }),
} as const;

/** `baton replay --verify`. */
export const REPLAY = {
  verify: flag<'verify', boolean>('verify', {
    flags: '--verify',
    help: 're-fold the session and its writers and report the first divergence (exit 1) instead of printing the timeline',
  }),
} as const;
