/** Where a command writes: one call per line (the newline is added). Tests and `main` pass process streams. */
export interface CliIo {
  out(line: string): void;
  err(line: string): void;
}

/** Lines to `process.stdout` / `process.stderr`. */
export const processIo: CliIo = {
  out: (line) => {
    process.stdout.write(`${line}\n`);
  },
  err: (line) => {
    process.stderr.write(`${line}\n`);
  },
};
