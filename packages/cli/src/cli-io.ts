/** Where a command writes: one call per line (the newline is added). Tests and `main` pass process streams. */
export interface CliIo {
  out(line: string): void;
  err(line: string): void;
}

let stdoutClosed = false;
let watchingStdout = false;

/** A reader that went away (`baton memory diff … | head`) ends the output quietly instead of crashing on EPIPE. */
function watchStdout(): void {
  if (watchingStdout) return;
  watchingStdout = true;
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    stdoutClosed = true;
  });
}

/** Lines to `process.stdout` / `process.stderr`. */
export const processIo: CliIo = {
  out: (line) => {
    watchStdout();
    if (!stdoutClosed) process.stdout.write(`${line}\n`);
  },
  err: (line) => {
    process.stderr.write(`${line}\n`);
  },
};
