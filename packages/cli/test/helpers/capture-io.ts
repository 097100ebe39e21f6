import type { CliIo } from '../../src/cli-io.ts';

/** A `CliIo` collecting lines, for running `main()` in-process. */
export function captureIo(): CliIo & { readonly stdout: string[]; readonly stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (line) => stdout.push(line), err: (line) => stderr.push(line) };
}
