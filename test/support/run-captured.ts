/** Runs a real agent's command under `timeout`, stdin empty, capturing what it prints. */
import { spawn } from 'node:child_process';

export interface Captured {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** `timeout <args…>` in `cwd` with exactly `env`; resolves once it has exited. */
export async function runCaptured(args: readonly string[], cwd: string, env: NodeJS.ProcessEnv): Promise<Captured> {
  const child = spawn('timeout', args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString('utf8');
  });
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString('utf8');
  });
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (c) => resolve(c));
  });
  return { code, stdout, stderr };
}
