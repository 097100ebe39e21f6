import { mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { arch, platform } from 'node:os';
import { join } from 'node:path';
import { runCaptured, type Captured } from './run-captured.ts';

/**
 * Claude Code (`@anthropic-ai/claude-code`, an agent nobody here wrote) run headless: `claude -p --output-format json`
 * with an isolated HOME and config directory, its base URL, key and model from the environment, its own compaction,
 * telemetry and every call that is not the model's off.
 */

/**
 * The native binary of this platform. The npm package's `bin` is a placeholder its postinstall replaces with that
 * binary; install scripts stay off here (`allowScripts`), so the binary is taken from the platform package itself.
 */
export function claudeBinary(): string {
  const fromPackage = createRequire(createRequire(import.meta.url).resolve('@anthropic-ai/claude-code/package.json'));
  return join(fromPackage.resolve(`@anthropic-ai/claude-code-${platform()}-${arch()}/package.json`), '..', 'claude');
}

/** Claude Code's tools the scripted tasks call (the rest of its tools stay denied in `-p` mode). */
export const CLAUDE_TOOLS = ['Bash', 'Read', 'Write', 'Edit', 'Glob', 'Grep'] as const;

/** The directories of one Claude Code run: its HOME, its config directory, and the scratch project it works in. */
export interface ClaudeDirs {
  readonly home: string;
  readonly configDir: string;
  readonly project: string;
}

/** Creates Claude Code's directories under `root` (the project may be shared with another agent: it is kept). */
export async function prepareClaude(root: string, project: string): Promise<ClaudeDirs> {
  const dirs = { home: join(root, 'claude-home'), configDir: join(root, 'claude-home', '.claude'), project };
  await mkdir(dirs.configDir, { recursive: true });
  await mkdir(project, { recursive: true });
  return dirs;
}

/**
 * The environment Claude Code reads its model from: `ANTHROPIC_BASE_URL` (the gateway URL naming the session, or a
 * handoff URL; its SDK appends `/v1/messages`), `ANTHROPIC_API_KEY`, `ANTHROPIC_MODEL`; its own compaction off, no
 * per-request nonce in its system prompt, no telemetry, no update checks, nothing but the model's calls.
 */
export function claudeEnv(dirs: ClaudeDirs, options: { baseUrl: string; apiKey: string; model: string }): NodeJS.ProcessEnv {
  return {
    PATH: process.env['PATH'] ?? '/usr/bin:/bin',
    HOME: dirs.home,
    TMPDIR: dirs.home,
    CLAUDE_CONFIG_DIR: dirs.configDir,
    ANTHROPIC_BASE_URL: options.baseUrl,
    ANTHROPIC_API_KEY: options.apiKey,
    ANTHROPIC_MODEL: options.model,
    ANTHROPIC_SMALL_FAST_MODEL: options.model,
    DISABLE_AUTO_COMPACT: '1',
    CLAUDE_CODE_ATTRIBUTION_HEADER: '0',
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_ERROR_REPORTING: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    NO_COLOR: '1',
  };
}

/**
 * Runs `claude -p <prompt>` under `timeout` in the project: JSON output, edits accepted and the task's tools allowed
 * (this machine runs as root, where Claude Code refuses to skip its permission checks altogether); `resume` continues
 * the project's last conversation (a new process reloading its history from its config directory).
 */
export async function runClaude(options: { dirs: ClaudeDirs; baseUrl: string; apiKey: string; model: string; prompt: string; resume?: boolean; timeoutS: number }): Promise<Captured> {
  const args = [
    '-k', '5', String(options.timeoutS), claudeBinary(),
    '-p', options.prompt,
    ...(options.resume === true ? ['--continue'] : []),
    '--output-format', 'json',
    '--permission-mode', 'acceptEdits',
    '--allowedTools', CLAUDE_TOOLS.join(','),
  ];
  return await runCaptured(args, options.dirs.project, claudeEnv(options.dirs, options));
}

/** What `claude -p --output-format json` prints: one result object. */
export interface ClaudeResult {
  readonly type: string;
  readonly subtype: string;
  readonly is_error: boolean;
  readonly num_turns: number;
  readonly result: string;
  readonly session_id: string;
  readonly permission_denials: readonly unknown[];
}

export const claudeResult = (stdout: string): ClaudeResult => JSON.parse(stdout) as ClaudeResult;
