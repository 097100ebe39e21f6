/**
 * `baton` from the TypeScript sources, for tests that run the CLI as a child process without a build:
 * `node --conditions=@baton/source --import tsx baton-source.ts <args>` (see `BATON_SOURCE_ARGS`).
 */
import { main } from '../../src/main.ts';

process.exitCode = await main(process.argv);
