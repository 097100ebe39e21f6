/** Running Codex CLI headless in the gateway end-to-end test, and reading what it sent and printed. */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCaptured } from './run-captured.ts';
import { fileURLToPath } from 'node:url';
import type { RecordedRequest } from '@baton/testing';
import { countTokens } from 'gpt-tokenizer';

const CODEX_BIN = fileURLToPath(new URL('../../node_modules/.bin/codex', import.meta.url));
/** The API key Codex is configured with (read from its environment). */
export const CODEX_KEY = 'sk-codex-e2e';

export type Item = Record<string, unknown>;
export interface CodexBody {
  readonly model: string;
  readonly input: readonly Item[];
  readonly tools: readonly Item[];
}

export const bodyOf = (r: RecordedRequest): CodexBody => JSON.parse(r.rawBody) as CodexBody;
export const authOf = (r: RecordedRequest): string => String(r.headers.authorization ?? '');
export const textOf = (item: Item | undefined): string => {
  const content = item?.['content'];
  if (typeof content === 'string') return content;
  return Array.isArray(content) ? (content as Item[]).map((p) => (typeof p['text'] === 'string' ? p['text'] : '')).join('') : '';
};
export const isUser = (item: Item | undefined): boolean => item?.['role'] === 'user' && (item['type'] === undefined || item['type'] === 'message');
/** The kind Codex gave a request in its turn metadata (`turn`, or `compaction`). */
export const requestKind = (r: RecordedRequest): unknown => (JSON.parse(String(r.headers['x-codex-turn-metadata'] ?? '{}')) as { request_kind?: unknown }).request_kind;

/** Prompt tokens of a request as the loopback counts them: model, instructions and tools, then each input item. */
export function promptTokens(body: CodexBody): number {
  const pieces = [JSON.stringify({ model: body.model, instructions: null, tools: body.tools }), ...body.input.map((i) => JSON.stringify(i))];
  return pieces.reduce((sum, piece) => sum + countTokens(piece, { disallowedSpecial: new Set<string>() }), 0);
}

/** One line of `codex exec --json`. */
export interface CodexEvent {
  readonly type: string;
  readonly item?: { readonly type: string; readonly status?: string; readonly exit_code?: number | null; readonly text?: string };
}
export const jsonLines = (stdout: string): CodexEvent[] =>
  stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as CodexEvent);
/** Codex's stderr without the one line it always prints (it reads stdin, empty here, before it starts). */
export const stderrLines = (stderr: string): string[] => stderr.split('\n').filter((l) => l !== '' && l !== 'Reading additional input from stdin...');

export type PublishedRecord = { type: string } & Record<string, unknown>;
/** The events a session's decisions published, in order. */
export function publishedOf(records: readonly { type: string; payload: unknown }[]): PublishedRecord[] {
  return records
    .flatMap((r) => (r.type === 'decision' ? (r.payload as { effects: { kind: string; event?: PublishedRecord }[] }).effects : []))
    .flatMap((e) => (e.kind === 'publish' && e.event !== undefined ? [e.event] : []));
}

/** Runs `codex exec` under `timeout`: isolated CODEX_HOME, HOME and TMPDIR, the scratch project as cwd, stdin empty. */
export async function runCodex(options: { cwd: string; home: string; codexHome: string; prompt: string; resume: boolean; compactLimit: number; timeoutS: number }): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const args = [
    '-k', '5', String(options.timeoutS), CODEX_BIN,
    'exec', '--json', '--skip-git-repo-check',
    '-c', `model_auto_compact_token_limit=${options.compactLimit}`,
    ...(options.resume ? ['resume', '--last'] : []),
    options.prompt,
  ];
  // stdin is /dev/null: Codex reads it to its end before it starts.
  return await runCaptured(args, options.cwd, {
    PATH: process.env['PATH'] ?? '/usr/bin:/bin',
    HOME: options.home,
    TMPDIR: options.home,
    CODEX_HOME: options.codexHome,
    CODEX_E2E_KEY: CODEX_KEY,
    NO_COLOR: '1',
  });
}

/**
 * Codex's configuration: one provider whose base URL is the gateway (with a fixed session id), read with its own key
 * from the environment; no approvals, a sandbox that lets it write in the scratch project, and no analytics (it talks
 * to nothing but the gateway).
 */
export async function writeCodexConfig(codexHome: string, baseUrl: string, model: string): Promise<void> {
  await writeFile(
    join(codexHome, 'config.toml'),
    [
      `model = "${model}"`,
      'model_provider = "baton"',
      'approval_policy = "never"',
      'sandbox_mode = "workspace-write"',
      '',
      '[model_providers.baton]',
      'name = "Baton gateway"',
      `base_url = "${baseUrl}"`,
      'env_key = "CODEX_E2E_KEY"',
      'wire_api = "responses"',
      '',
      '[analytics]',
      'enabled = false',
      '',
    ].join('\n'),
  );
}
