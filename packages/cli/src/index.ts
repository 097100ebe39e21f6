/** The `baton` CLI as a library: the entry `bin/baton.js` calls, and the commands it is made of. */
export { main, buildProgram } from './main.ts';
export { runDaemon, type DaemonCommandOptions } from './commands/daemon-command.ts';
export { runDemo, DEMO_TAIL_POLICY, type DemoOptions } from './commands/demo-command.ts';
export { runMemoryDiff, runMemoryLog, runMemoryRestore, MEMORY_EXIT, type MemoryOptions } from './commands/memory-command.ts';
export { runReplay, REPLAY_EXIT, type ReplayOptions } from './commands/replay-command.ts';
export { runStatus, runSessions, RUNTIME_EXIT, type RuntimeCommandOptions, type SessionsOptions } from './commands/runtime-command.ts';
export type { CliIo } from './cli-io.ts';
export { MALLOC_TUNABLES } from './daemon/malloc-tunables.ts';
