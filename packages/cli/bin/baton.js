#!/bin/sh
':' //; export GLIBC_TUNABLES="${GLIBC_TUNABLES-glibc.malloc.arena_max=2:glibc.malloc.trim_threshold=131072:glibc.malloc.mmap_threshold=131072}"; exec node "$0" "$@"
// The `baton` command: runs the compiled CLI in ../dist (plain JavaScript, built by `npm run build` in the repository;
// shipped in the package). Commands load their modules when they run, so `baton --help` stays fast.
//
// Run as a program, the file is first a shell script (the line above; JavaScript reads it as a string and a comment):
// it starts node on this file with glibc's allocator set to give memory back (two arenas for all threads, a fixed
// 128 KiB mmap/trim threshold) unless GLIBC_TUNABLES is already set (even empty). These are read when a process
// starts, so they cannot be set from JavaScript. Without them a daemon that served a burst of sessions keeps tens of
// MiB of freed-but-fragmented heap for good; with them it returns to about its start-up size (docs/operations.md).
// Other C libraries ignore the variable. `node bin/baton.js` skips the shell line and runs with node's defaults.
import module from 'node:module';

// Node 22.1+ keeps V8's compiled code of these modules on disk between runs; older Node has no such cache.
module.enableCompileCache?.();

let cli;
try {
  cli = await import('../dist/main.js');
} catch (err) {
  if (err?.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes('/dist/main.js')) {
    process.stderr.write('baton: the CLI is not built (no dist/main.js); run `npm run build` at the repository root.\n');
    process.exit(1);
  }
  throw err;
}
process.exitCode = await cli.main(process.argv);
