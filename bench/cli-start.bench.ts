/**
 * CLI start-up benchmark: wall time of the built `baton` command (`packages/cli/bin/baton.js`, plain JavaScript from
 * dist/) from spawn to exit, against `node -e 0` (the floor: starting node itself) measured in the same rounds.
 *
 * - `baton --help`: parses the command line and prints help; loads commander and the protocol's subject names only.
 * - `baton replay <session>`: prints the timeline of the session `baton demo` recorded (90 messages, 5 writers) from
 *   its LMDB data directory: loads the runtime, reads and formats every record.
 * - `baton --help` from the TypeScript sources through tsx (`node --import tsx`, the development path, which the
 *   installed command ran before packages were built): the cost of compiling at start.
 *
 * The section first brings the build up to date (`tsc -b`, incremental) and records the demo session with the built
 * CLI. Each round runs every command once, in the same order, so load on the machine hits all of them alike; the
 * figures are medians over the rounds (≥ 10).
 *
 * Standalone: `npm run bench -- --only cli-start` (env: CLI_START_BENCH_RUNS, default 15).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { BenchRow, BenchSection } from './bench-types.ts';
import { buildPackages, runNode } from './built-daemon.ts';
import type { TargetCheck } from './main.ts';

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
const BATON_BIN = fileURLToPath(new URL('../packages/cli/bin/baton.js', import.meta.url));
const BATON_SOURCE = fileURLToPath(new URL('../packages/cli/test/helpers/baton-source.ts', import.meta.url));

/** Row names the targets summary looks up. */
export const CLI_START_ROWS = {
  node: 'node -e 0 median',
  help: 'baton --help median',
  helpRatio: 'baton --help / node -e 0',
  replay: 'baton replay <demo session> median',
  replayRatio: 'baton replay / node -e 0',
  helpSource: 'baton --help from sources (tsx) median',
  helpSourceRatio: 'from sources / built',
} as const;

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** Runs `node <args>` to completion in the repository root; returns its wall time in ms, or throws when it fails. */
function timedRun(args: readonly string[]): number {
  const start = performance.now();
  const run = spawnSync(process.execPath, args, { cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  const ms = performance.now() - start;
  if (run.status !== 0) throw new Error(`node ${args.join(' ')} exited ${String(run.status ?? run.signal)}: ${run.stderr}`);
  return ms;
}

export async function benchCliStart(runs = Number(process.env['CLI_START_BENCH_RUNS'] ?? 15)): Promise<BenchSection> {
  const rounds = Math.max(10, Math.floor(runs) || 15);
  await buildPackages();
  const dataDir = mkdtempSync(join(tmpdir(), 'baton-bench-cli-'));
  try {
    const demo = await runNode([BATON_BIN, 'demo', '--data-dir', dataDir, '--pool-size', '1'], 'baton demo');
    const session = /^Session id: (\S+)$/m.exec(demo)?.[1];
    if (session === undefined) throw new Error(`baton demo printed no session id:\n${demo.slice(-500)}`);

    const commands = {
      node: ['-e', '0'],
      help: [BATON_BIN, '--help'],
      replay: [BATON_BIN, 'replay', session, '--data-dir', dataDir],
      helpSource: ['--conditions=@baton/source', '--import', 'tsx', BATON_SOURCE, '--help'],
    } as const;
    const times: Record<keyof typeof commands, number[]> = { node: [], help: [], replay: [], helpSource: [] };
    // One unmeasured round warms the OS file cache (and Node's compile cache where it has one).
    for (const args of Object.values(commands)) timedRun(args);
    for (let i = 0; i < rounds; i++) {
      for (const key of Object.keys(commands) as (keyof typeof commands)[]) times[key].push(timedRun(commands[key]));
    }

    const node = median(times.node);
    const help = median(times.help);
    const replay = median(times.replay);
    const helpSource = median(times.helpSource);
    const note = `${rounds} runs`;
    const rows: BenchRow[] = [
      { name: CLI_START_ROWS.node, value: node, unit: 'ms', note },
      { name: CLI_START_ROWS.help, value: help, unit: 'ms', note: `${note}; built CLI (dist/), plain node` },
      { name: CLI_START_ROWS.helpRatio, value: help / node, unit: '×' },
      { name: CLI_START_ROWS.replay, value: replay, unit: 'ms', note: `${note}; the demo's session (LMDB data dir), timeline to /dev/null` },
      { name: CLI_START_ROWS.replayRatio, value: replay / node, unit: '×' },
      { name: CLI_START_ROWS.helpSource, value: helpSource, unit: 'ms', note: `${note}; node --import tsx on src/ (compiles at start)` },
      { name: CLI_START_ROWS.helpSourceRatio, value: helpSource / help, unit: '×' },
    ];
    return { title: `CLI start-up: built baton vs node -e 0 (medians of ${rounds} runs)`, rows };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export function cliStartTargets(section: BenchSection | undefined): TargetCheck[] {
  const help = section?.rows.find((r) => r.name === CLI_START_ROWS.help);
  return [{ label: 'CLI: baton --help median', value: help?.value, unit: 'ms', target: '< 300', pass: (v) => v < 300 }];
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const section = await benchCliStart();
  for (const row of section.rows) console.log(`${row.name}: ${row.value.toFixed(1)} ${row.unit}${row.note !== undefined ? `  (${row.note})` : ''}`);
}
