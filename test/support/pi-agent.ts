import { runCaptured } from './run-captured.ts';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * pi (`@mariozechner/pi-coding-agent`, an agent nobody here wrote) run headless: its configuration (one provider, its
 * own compaction off), the process, and its `--mode json` output.
 */

export const PI_BIN = fileURLToPath(new URL('../../node_modules/.bin/pi', import.meta.url));

/** The provider APIs pi speaks that the gateway records. */
export type PiApi = 'openai-completions' | 'openai-responses' | 'anthropic-messages';

export interface PiModel {
  readonly id: string;
  /** pi's own view of the window (its compaction threshold would be this minus its reserve, were it on). */
  readonly contextWindow: number;
  readonly maxTokens: number;
  /** Whether pi treats the model as a reasoning one (Responses reasoning items, Anthropic thinking blocks). */
  readonly reasoning: boolean;
}

/** The provider named `baton` in pi's `models.json`. */
export interface PiProvider {
  readonly api: PiApi;
  /** The gateway URL naming the session: `…/s/<sid>/v1` for the OpenAI APIs, `…/s/<sid>` for Anthropic (its SDK adds `/v1/messages`). */
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly model: PiModel;
  readonly compat?: Readonly<Record<string, unknown>>;
}

/** The base URL pi is given for a gateway session: the Anthropic SDK appends `/v1/messages` itself. */
export function piBaseUrl(gatewayBaseURL: string, session: string, api: PiApi): string {
  const origin = gatewayBaseURL.replace(/\/v1$/, '');
  return api === 'anthropic-messages' ? `${origin}/s/${session}` : `${origin}/s/${session}/v1`;
}

/** The directories of one pi run: its config dir, its HOME, and the scratch project it works in (its cwd). */
export interface PiDirs {
  readonly agentDir: string;
  readonly home: string;
  readonly project: string;
}

/** Creates pi's directories under `root` and writes its config: the provider, and its own compaction off. */
export async function preparePi(root: string, provider: PiProvider): Promise<PiDirs> {
  const dirs = { agentDir: join(root, 'agent'), home: join(root, 'home'), project: join(root, 'project') };
  await Promise.all([mkdir(dirs.agentDir), mkdir(dirs.home), mkdir(dirs.project)]);
  const { model } = provider;
  await writeFile(
    join(dirs.agentDir, 'models.json'),
    JSON.stringify({
      providers: {
        baton: {
          baseUrl: provider.baseUrl,
          api: provider.api,
          apiKey: provider.apiKey,
          ...(provider.compat !== undefined ? { compat: provider.compat } : {}),
          models: [{ id: model.id, name: 'pi loopback', reasoning: model.reasoning, input: ['text'], contextWindow: model.contextWindow, maxTokens: model.maxTokens }],
        },
      },
    }),
  );
  await writeFile(join(dirs.agentDir, 'settings.json'), JSON.stringify({ compaction: { enabled: false } }));
  return dirs;
}

/** Runs `pi -p` under `timeout`: isolated config and HOME, the scratch project as cwd, nothing but the gateway to talk to. */
export async function runPi(options: { dirs: PiDirs; model: string; prompts: readonly string[]; timeoutS: number }): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const { dirs } = options;
  const args = [
    '-k', '5', String(options.timeoutS), PI_BIN,
    '-p', '--mode', 'json', '--no-session', '--offline',
    '--no-extensions', '--no-skills', '--no-prompt-templates', '--no-themes', '--no-context-files',
    '--provider', 'baton', '--model', options.model,
    ...options.prompts,
  ];
  return await runCaptured(args, dirs.project, {
    PATH: process.env['PATH'] ?? '/usr/bin:/bin',
    HOME: dirs.home,
    TMPDIR: dirs.home,
    PI_CODING_AGENT_DIR: dirs.agentDir,
    PI_OFFLINE: '1',
    PI_SKIP_VERSION_CHECK: '1',
    PI_TELEMETRY: '0',
    NO_COLOR: '1',
  });
}

/** The usage pi records for an answer (its reading of the provider's usage). */
export interface PiUsage {
  readonly input: number;
  readonly output: number;
  readonly cacheRead: number;
  readonly cacheWrite: number;
}

/** One line of pi's `--mode json` output, as far as the tests read it. */
export interface PiEvent {
  readonly type: string;
  readonly message?: { readonly role?: string; readonly stopReason?: string; readonly usage?: PiUsage };
}

export function piEvents(stdout: string): PiEvent[] {
  return stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as PiEvent);
}

/** pi's assistant answers, in order. */
export function piAnswers(events: readonly PiEvent[]): NonNullable<PiEvent['message']>[] {
  return events.flatMap((e) => (e.type === 'message_end' && e.message?.role === 'assistant' ? [e.message] : []));
}

/** The context an answer's request carried, as pi was told: every input token, cached or not. */
export function contextTokens(answer: PiEvent['message']): number {
  const u = answer?.usage;
  return u === undefined ? 0 : u.input + u.cacheRead + u.cacheWrite;
}
