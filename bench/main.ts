/**
 * Baton's benchmark runner: `npm run bench` (all sections) or `npm run bench -- --only <name>[,<name>…]`.
 *
 * Runs each section in sequence, prints it as an aligned table, then a "targets" summary (PASS / MISS per line)
 * against the figures the issues ask for. Informative only: a MISS does not fail the run; the exit code is non-zero
 * only when a section crashes (or for a usage error).
 *
 * To add a section: write `bench/<name>.bench.ts` exporting `async function …(): Promise<BenchSection>` and append an
 * entry to `SECTIONS` (optionally with `targets`, which reads the section's rows).
 */
import { cpus, platform, arch } from 'node:os';
import type { BenchRow, BenchSection } from './bench-types.ts';

/** One line of the targets summary; `value` undefined when the figure is missing (section skipped or failed). */
export interface TargetCheck {
  readonly label: string;
  readonly value: number | undefined;
  readonly unit: string;
  /** Human-readable target, e.g. `≥ 50,000`. */
  readonly target: string;
  readonly pass: (value: number) => boolean;
}

export interface BenchEntry {
  /** Name for `--only`. */
  readonly name: string;
  readonly run: () => Promise<BenchSection>;
  /** The section's targets, computed from its rows (called with `undefined` when the section did not produce any). */
  readonly targets?: (section: BenchSection | undefined) => TargetCheck[];
}

/**
 * A section module that also exports its targets: imported when the section runs (so one that fails to load is
 * reported like one that crashes), then kept for the targets summary.
 */
function lazyModule<M>(load: () => Promise<M>): { load: () => Promise<M>; get: () => M | undefined } {
  let loaded: M | undefined;
  return {
    load: async () => (loaded = await load()),
    get: () => loaded,
  };
}

/** The targets line of a section whose module did not load. */
function unavailable(label: string): TargetCheck[] {
  return [{ label: `${label}: targets`, value: undefined, unit: '', target: '(section did not load)', pass: () => false }];
}

const memoryStore = lazyModule(() => import('./memory-store.bench.ts'));
const writers = lazyModule(() => import('./writers.bench.ts'));
const rebuild = lazyModule(() => import('./rebuild.bench.ts'));
const concurrency = lazyModule(() => import('./concurrency.bench.ts'));
const memory = lazyModule(() => import('./memory.bench.ts'));
const sessionLoad = lazyModule(() => import('./session-load.bench.ts'));
const gateway = lazyModule(() => import('./gateway.bench.ts'));
const writersApi = lazyModule(() => import('./writers-api.bench.ts'));
const instantCompaction = lazyModule(() => import('./instant-compaction.bench.ts'));
const cliStart = lazyModule(() => import('./cli-start.bench.ts'));
const cluster = lazyModule(() => import('./cluster.bench.ts'));
const fit = lazyModule(() => import('./fit.bench.ts'));
const handoff = lazyModule(() => import('./handoff.bench.ts'));

// Sections are imported when they run, so one that fails to load is reported like one that crashes.
const SECTIONS: readonly BenchEntry[] = [
  { name: 'event-log', run: async () => (await import('./event-log.bench.ts')).benchEventLog(), targets: eventLogTargets },
  { name: 'nats-append', run: async () => (await import('./nats-append.bench.ts')).benchNatsAppend(), targets: natsAppendTargets },
  {
    name: 'memory-store',
    run: async () => (await memoryStore.load()).benchMemoryStore(),
    targets: (section) => memoryStore.get()?.memoryStoreTargets(section) ?? unavailable('memory store'),
  },
  { name: 'commit', run: async () => (await import('./commit.bench.ts')).benchCommit() },
  { name: 'rebuild-render', run: async () => (await import('./rebuild-render.bench.ts')).benchRebuildRender() },
  {
    name: 'writers',
    run: async () => (await writers.load()).benchWriters(),
    targets: (section) => writers.get()?.writersTargets(section) ?? unavailable('writers'),
  },
  {
    name: 'rebuild',
    run: async () => (await rebuild.load()).benchRebuild(),
    targets: (section) => rebuild.get()?.rebuildTargets(section) ?? unavailable('rebuild'),
  },
  {
    name: 'fit',
    run: async () => (await fit.load()).benchFit(),
    targets: (section) => fit.get()?.fitTargets(section) ?? unavailable('fit'),
  },
  {
    name: 'concurrency',
    run: async () => (await concurrency.load()).benchConcurrency(),
    targets: (section) => concurrency.get()?.concurrencyTargets(section) ?? unavailable('concurrency'),
  },
  {
    name: 'memory',
    run: async () => (await memory.load()).benchMemory(),
    targets: (section) => memory.get()?.memoryTargets(section) ?? unavailable('memory'),
  },
  {
    name: 'session-load',
    run: async () => (await sessionLoad.load()).benchSessionLoad(),
    targets: (section) => sessionLoad.get()?.sessionLoadTargets(section) ?? unavailable('session load'),
  },
  {
    name: 'gateway',
    run: async () => (await gateway.load()).benchGateway(),
    targets: (section) => gateway.get()?.gatewayTargets(section) ?? unavailable('gateway'),
  },
  {
    name: 'writers-api',
    run: async () => (await writersApi.load()).benchWritersApi(),
    targets: (section) => writersApi.get()?.writersApiTargets(section) ?? unavailable('writers per API'),
  },
  {
    name: 'instant-compaction',
    run: async () => (await instantCompaction.load()).benchInstantCompaction(),
    targets: (section) => instantCompaction.get()?.instantCompactionTargets(section) ?? unavailable('instant compaction'),
  },
  {
    name: 'cli-start',
    run: async () => (await cliStart.load()).benchCliStart(),
    targets: (section) => cliStart.get()?.cliStartTargets(section) ?? unavailable('CLI start-up'),
  },
  {
    name: 'cluster',
    run: async () => (await cluster.load()).benchCluster(),
    targets: (section) => cluster.get()?.clusterTargets(section) ?? unavailable('cluster'),
  },
  {
    name: 'handoff',
    run: async () => (await handoff.load()).benchHandoff(),
    targets: (section) => handoff.get()?.handoffTargets(section) ?? unavailable('handoff'),
  },
];

// ---------------------------------------------------------------------------------------------------------------
// targets

const perSecond = (row: BenchRow): boolean => /\/s$/.test(row.unit);

function findRow(section: BenchSection | undefined, predicate: (row: BenchRow) => boolean): BenchRow | undefined {
  return section?.rows.find(predicate);
}

function eventLogTargets(section: BenchSection | undefined): TargetCheck[] {
  const rows = section?.rows ?? [];
  // The first per-second "append" row that is not a raw baseline is the headline durable-append figure; its ratio to
  // raw is the section's own ratio row right below it when there is one, else computed against the first raw row.
  const at = rows.findIndex((r) => perSecond(r) && /append/i.test(r.name) && !/raw/i.test(r.name));
  const append = rows[at];
  const below = rows[at + 1];
  const raw = findRow(section, (r) => perSecond(r) && /raw/i.test(r.name));
  const ratio = below !== undefined && below.unit === '×' ? below.value : append !== undefined && raw !== undefined ? append.value / raw.value : undefined;
  const replay = findRow(section, (r) => perSecond(r) && /replay/i.test(r.name));
  return [
    { label: 'event log: durable appends/s', value: append?.value, unit: append?.unit ?? 'records/s', target: '≥ 50,000', pass: (v) => v >= 50_000 },
    { label: 'event log: appends/s vs raw lmdb-js puts', value: ratio, unit: '×', target: '≥ 0.5', pass: (v) => v >= 0.5 },
    { label: 'event log: replay', value: replay?.value, unit: replay?.unit ?? 'events/s', target: '≥ 100,000', pass: (v) => v >= 100_000 },
  ];
}

function natsAppendTargets(section: BenchSection | undefined): TargetCheck[] {
  const ratio = findRow(section, (r) => r.unit === '×' && /^p50 ratio append\/raw/.test(r.name));
  const p99 = findRow(section, (r) => r.unit === 'µs' && /^append round trip p99/.test(r.name));
  const scoped = findRow(section, (r) => r.unit === '×' && /^p50 ratio scoped\/unscoped append/.test(r.name));
  return [
    { label: 'NATS append: p50 vs raw request/reply', value: ratio?.value, unit: '×', target: '≤ 2', pass: (v) => v <= 2 },
    { label: 'NATS append: p99', value: p99?.value, unit: 'µs', target: '< 2,000', pass: (v) => v < 2_000 },
    { label: 'NATS append: scoped vs unscoped subject p50', value: scoped?.value, unit: '×', target: '≤ 1.05', pass: (v) => v <= 1.05 },
  ];
}

// ---------------------------------------------------------------------------------------------------------------
// output

const numberFormat = new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 });

function formatValue(value: number | undefined): string {
  return value === undefined || !Number.isFinite(value) ? 'n/a' : numberFormat.format(value);
}

/** Prints rows as columns: left-aligned text, right-aligned numbers. */
function printTable(rows: readonly (readonly string[])[], rightAligned: ReadonlySet<number>): void {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  for (const row of rows) {
    const cells = row.map((cell, i) => {
      const width = widths[i] ?? 0;
      // The last column is not padded (no trailing spaces).
      if (i === row.length - 1 && !rightAligned.has(i)) return cell;
      return rightAligned.has(i) ? cell.padStart(width) : cell.padEnd(width);
    });
    console.log(`  ${cells.join('  ')}`.trimEnd());
  }
}

function printSection(section: BenchSection, seconds: number): void {
  console.log(`\n## ${section.title}  (${seconds.toFixed(1)} s)\n`);
  printTable(
    section.rows.map((r) => [r.name, formatValue(r.value), r.unit, r.note ?? '']),
    new Set([1]),
  );
}

function printHeader(): void {
  const cpuList = cpus();
  const model = cpuList[0]?.model.trim() ?? 'unknown CPU';
  console.log('# Baton benchmarks');
  console.log(`date:  ${new Date().toISOString()}`);
  console.log(`node:  ${process.version} (${platform()} ${arch()})`);
  console.log(`cpu:   ${model} × ${cpuList.length}`);
}

// ---------------------------------------------------------------------------------------------------------------
// main

function usage(): string {
  return `usage: npm run bench [-- --only <name>[,<name>…]]\nsections: ${SECTIONS.map((s) => s.name).join(', ')}`;
}

/** Parses `--only a,b`, `--only=a` (repeatable) and `--help`; returns the selected entries or a usage error. */
function selectSections(argv: readonly string[]): BenchEntry[] | string {
  const names: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--help' || arg === '-h') return usage();
    let value: string | undefined;
    if (arg === '--only') value = argv[++i];
    else if (arg.startsWith('--only=')) value = arg.slice('--only='.length);
    else return `unknown argument ${arg}\n${usage()}`;
    if (value === undefined || value === '') return `--only needs a section name\n${usage()}`;
    names.push(...value.split(',').map((n) => n.trim()).filter((n) => n !== ''));
  }
  if (names.length === 0) return [...SECTIONS];
  const unknown = names.filter((n) => !SECTIONS.some((s) => s.name === n));
  if (unknown.length > 0) return `unknown section ${unknown.join(', ')}\n${usage()}`;
  return SECTIONS.filter((s) => names.includes(s.name));
}

async function main(): Promise<number> {
  const selected = selectSections(process.argv.slice(2));
  if (typeof selected === 'string') {
    const help = selected.startsWith('usage:');
    (help ? console.log : console.error)(selected);
    return help ? 0 : 2;
  }
  printHeader();
  const results = new Map<string, BenchSection>();
  const failed: string[] = [];
  for (const entry of selected) {
    const start = process.hrtime.bigint();
    try {
      const section = await entry.run();
      results.set(entry.name, section);
      printSection(section, Number(process.hrtime.bigint() - start) / 1e9);
    } catch (err) {
      failed.push(entry.name);
      console.error(`\n## ${entry.name}: FAILED\n`);
      console.error(err);
    }
  }

  const checks = selected.flatMap((entry) => entry.targets?.(results.get(entry.name)) ?? []);
  if (checks.length > 0) {
    console.log('\n## Targets (informative)\n');
    printTable(
      checks.map((c) => {
        const verdict = c.value === undefined || !Number.isFinite(c.value) ? 'n/a' : c.pass(c.value) ? 'PASS' : 'MISS';
        return [verdict, c.label, formatValue(c.value), c.unit, `target ${c.target}`];
      }),
      new Set([2]),
    );
  }
  if (failed.length > 0) console.error(`\nsections that crashed: ${failed.join(', ')}`);
  return failed.length > 0 ? 1 : 0;
}

process.exitCode = await main();
