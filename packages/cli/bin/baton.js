#!/usr/bin/env node
// The `baton` command: runs the compiled CLI in ../dist (plain JavaScript, built by `npm run build` in the repository;
// shipped in the package). Commands load their modules when they run, so `baton --help` stays fast.
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
