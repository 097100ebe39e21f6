import type { ChildProcess } from 'node:child_process';
import { childEnv, completion, runBaton, spawnBaton, waitForLine, type BatonRun } from '../../packages/cli/test/helpers/run-baton.ts';

/**
 * `baton up` as a user runs it, in a child process (from the sources, as `npx baton` runs them): daemon and gateway in
 * one process on a data directory, reachable over a NATS server so the test (and `baton sessions`) can ask it things;
 * writers call the loopback model with their own keys, OpenAI-compatible ones at OPENAI_BASE_URL and Anthropic
 * Messages ones at ANTHROPIC_BASE_URL.
 */

export interface BatonUp {
  /** The gateway's origin, `http://127.0.0.1:<port>` (agents add `/s/<session>/v1`, or `/s/<session>` for Anthropic). */
  readonly origin: string;
  readonly child: ChildProcess;
  /** SIGTERM, then what it printed and how it exited. */
  stop(): Promise<BatonRun>;
}

export interface BatonUpOptions {
  readonly dataDir: string;
  readonly natsUrl: string;
  /** The loopback model's origin (`http://127.0.0.1:<port>`). */
  readonly modelUrl: string;
  readonly writerKey: string;
  readonly anthropicWriterKey: string;
  readonly contextWindow: number;
}

export async function startBatonUp(options: BatonUpOptions): Promise<BatonUp> {
  const env = childEnv({
    OPENAI_BASE_URL: `${options.modelUrl}/v1`,
    OPENAI_API_KEY: options.writerKey,
    ANTHROPIC_BASE_URL: options.modelUrl,
    ANTHROPIC_API_KEY: options.anthropicWriterKey,
  });
  const args = ['up', '--data-dir', options.dataDir, '--nats', options.natsUrl, '--port', '0', '--log-level', 'warn', '--context-window', String(options.contextWindow)];
  const child = spawnBaton(args, env);
  const done = completion(child);
  const line = await waitForLine(child, /base URL: http:\/\/\S+\/v1/);
  const origin = /(http:\/\/\S+)\/v1/.exec(line)?.[1];
  if (origin === undefined) throw new Error(`baton up printed no base URL: ${line}`);
  return {
    origin,
    child,
    stop: async () => {
      child.kill('SIGTERM');
      return await done;
    },
  };
}

/** `baton <args>` against the same NATS server (for `sessions`), or on the data directory (for `replay`). */
export async function baton(args: readonly string[]): Promise<BatonRun> {
  return await runBaton(args, childEnv());
}
