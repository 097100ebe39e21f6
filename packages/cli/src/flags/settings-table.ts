/**
 * Every setting of `baton`, named once. A setting's name gives its spelling on each surface it has: `maxQueuedRequests`
 * is `--max-queued-requests` on the command line and `max_queued_requests` in the configuration file (`--config`);
 * `dataDir` is `--data-dir` and `BATON_DATA_DIR` in the environment. A variable that follows another tool's convention
 * (`OPENAI_API_KEY`), or kept the name it had before this table (`BATON_NATS_URL`), spells itself out.
 *
 * The flag catalogue can only declare flags of settings that have one (its `flag` takes a `FlagSetting`), variables are
 * read through `envValue`, and tests hold the configuration file's keys, every variable the CLI names and the README's
 * table of settings to this table.
 */

interface Surfaces {
  /** On the command line, as `--<name in kebab-case>`. */
  readonly flag?: true;
  /** In the configuration file, as `<name in snake_case>` (a top-level key). */
  readonly config?: true;
  /** In the environment, as `BATON_<NAME IN UPPER SNAKE_CASE>`, or as the variable named here. */
  readonly env?: true | string;
}

export const SETTINGS = {
  // The NATS connection.
  nats: { flag: true, env: 'BATON_NATS_URL' },
  prefix: { flag: true },
  natsCreds: { flag: true },
  natsNkey: { flag: true },
  natsUser: { flag: true },
  natsPassword: { env: true },
  natsToken: { env: true },
  natsTlsCa: { flag: true },
  natsTlsCert: { flag: true },
  natsTlsKey: { flag: true },
  natsInboxPrefix: { flag: true },
  // Data, logging, metrics, output, listening, waiting.
  dataDir: { flag: true, env: true },
  logLevel: { flag: true },
  metrics: { flag: true },
  json: { flag: true },
  host: { flag: true },
  port: { flag: true },
  timeout: { flag: true },
  // The daemon.
  config: { flag: true },
  poolSize: { flag: true },
  workerHeapMb: { flag: true },
  writerModel: { flag: true },
  openaiBaseUrl: { env: 'OPENAI_BASE_URL' },
  openaiApiKey: { env: 'OPENAI_API_KEY' },
  anthropicBaseUrl: { env: 'ANTHROPIC_BASE_URL' },
  anthropicApiKey: { env: 'ANTHROPIC_API_KEY' },
  disableCheckpoint: { env: true },
  budgets: { config: true },
  rebuildCaps: { config: true },
  tail: { config: true },
  fit: { config: true },
  waits: { config: true },
  drainTimeout: { flag: true },
  maxResidentSessions: { flag: true },
  idleUnload: { flag: true },
  maxQueuedRequests: { flag: true, config: true },
  maxQueuedPerSession: { config: true },
  requireScopedSubjects: { flag: true },
  handoffTtl: { flag: true },
  // Cluster mode.
  cluster: { flag: true },
  durability: { flag: true },
  replicas: { flag: true },
  lease: { flag: true },
  forgetDead: { flag: true },
  // The gateway.
  upstream: { flag: true },
  project: { flag: true },
  contextWindow: { flag: true },
  passthrough: { flag: true },
  upstreamTimeout: { flag: true },
  rebuiltContext: { flag: true },
  inspect: { flag: true },
  writerKey: { flag: true },
  resumeEmpty: { flag: true },
  // Handing a session to another agent.
  to: { flag: true },
  model: { flag: true },
  window: { flag: true },
  gateway: { flag: true },
  wait: { flag: true },
  ttl: { flag: true },
  // Listing sessions, replay, rebind.
  limit: { flag: true },
  after: { flag: true },
  verify: { flag: true },
  rebindKey: { env: true },
} as const satisfies Record<string, Surfaces>;

export type SettingName = keyof typeof SETTINGS;
/** The settings a surface has. */
type With<S extends keyof Surfaces> = { [K in SettingName]: (typeof SETTINGS)[K] extends Record<S, unknown> ? K : never }[SettingName];
export type FlagSetting = With<'flag'>;
export type ConfigSetting = With<'config'>;
export type EnvSetting = With<'env'>;

function words(name: string): string[] {
  return name.split(/(?=[A-Z])/).map((w) => w.toLowerCase());
}

/** `--max-queued-requests` for `maxQueuedRequests`. */
export function flagName(name: FlagSetting): string {
  return `--${words(name).join('-')}`;
}

/** `max_queued_requests` for `maxQueuedRequests`. */
export function configKey(name: ConfigSetting): string {
  return words(name).join('_');
}

/** `BATON_DATA_DIR` for `dataDir`; the variable named in the table where it names one. */
export function envName(name: EnvSetting): string {
  const env: true | string = SETTINGS[name].env;
  return env === true ? `BATON_${words(name).join('_').toUpperCase()}` : env;
}

/** A setting's variable in `env`, unless unset or empty. */
export function envValue(env: NodeJS.ProcessEnv, name: EnvSetting): string | undefined {
  const value = env[envName(name)];
  return value === undefined || value === '' ? undefined : value;
}

/** The settings that have `surface`, in the table's order. */
export function settingsWith(surface: keyof Surfaces): SettingName[] {
  return (Object.keys(SETTINGS) as SettingName[]).filter((name) => (SETTINGS[name] as Surfaces)[surface] !== undefined);
}
