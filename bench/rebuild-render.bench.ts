/**
 * Rebuild-render benchmark: latency of `renderRebuildContext` on full-size inputs (every memory file, the task tree,
 * the writers, 200 recent user messages and the memory keys all far above their caps), against the time of just
 * reading the same texts raw from disk, and the rendered size against the sum of the caps.
 *
 * Render is measured cold (a fresh token counter each run: nothing cached, as on a real rebuild, where the texts
 * are new) and warm (the process-wide cached counter, the same texts rendered again). Raw read: `readFile` of the
 * same texts, written once to a temporary directory. Every figure is over ≥ 100 runs after warm-up.
 *
 * Standalone: `npx tsx --conditions=@baton/source bench/rebuild-render.bench.ts`
 * (env: REBUILD_BENCH_RUNS, default 100).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import {
  DEFAULT_REBUILD_CAPS,
  REBUILD_CAP_KEYS,
  TokenCounter,
  defaultTokenCounter,
  renderRebuildContext,
  type RebuildContextInput,
} from '@baton/memory-store';
import { fullSizeInput } from '../packages/memory-store/test/rebuild/fixtures.ts';
import type { BenchRow, BenchSection } from './bench-types.ts';

/** Row names the targets summary may look up. */
export const REBUILD_RENDER_ROWS = {
  coldP50: 'render p50 (cold counter)',
  coldP99: 'render p99 (cold counter)',
  warmP50: 'render p50 (warm counter)',
  warmP99: 'render p99 (warm counter)',
  rawP50: 'raw read of the same texts p50',
  ratioCold: 'render cold p50 / raw read p50',
  ratioWarm: 'render warm p50 / raw read p50',
  tokens: 'rendered tokens',
  capSum: 'sum of caps',
  tokensVsCaps: 'rendered tokens / sum of caps',
} as const;

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] ?? Number.NaN;
}

async function timeRuns(runs: number, warmup: number, fn: () => unknown): Promise<number[]> {
  for (let i = 0; i < warmup; i += 1) await fn();
  const times: number[] = [];
  for (let i = 0; i < runs; i += 1) {
    const start = performance.now();
    await fn();
    times.push(performance.now() - start);
  }
  return times;
}

/** The texts a caller reads before rendering, one file each (recent user messages and tasks as JSON). */
function rawFiles(input: RebuildContextInput): Record<string, string> {
  return {
    'checkpoint.md': input.checkpoint ?? '',
    'project-MEMORY.md': input.projectMemory ?? '',
    'global-MEMORY.md': input.globalMemory ?? '',
    'notes.md': input.notes ?? '',
    'recent-user.json': JSON.stringify(input.recentUser),
    'tasks.json': JSON.stringify(input.tasks),
    'writers.json': JSON.stringify(input.activeWriters),
    'keys.json': JSON.stringify(input.memoryKeys),
  };
}

/** Runs the benchmark; `runs` defaults to REBUILD_BENCH_RUNS or 100 (never fewer than 100). */
export async function benchRebuildRender(runs = Number(process.env['REBUILD_BENCH_RUNS'] ?? 100)): Promise<BenchSection> {
  const n = Math.max(100, Math.floor(runs) || 100);
  const input = fullSizeInput();
  const files = rawFiles(input);
  const inputChars = Object.values(files).reduce((sum, text) => sum + text.length, 0);
  const inputTokens = Object.values(files).reduce((sum, text) => sum + new TokenCounter().count(text), 0);

  const dir = mkdtempSync(join(tmpdir(), 'baton-rebuild-bench-'));
  try {
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    const names = Object.keys(files);
    const raw = await timeRuns(n, 10, () => Promise.all(names.map((name) => readFile(join(dir, name), 'utf8'))));

    const cold = await timeRuns(n, 3, () => renderRebuildContext({ ...input, counter: new TokenCounter() }));
    const warm = await timeRuns(n, 3, () => renderRebuildContext({ ...input, counter: defaultTokenCounter }));

    const rendered = renderRebuildContext(input);
    if (rendered === null) throw new Error('the full-size input bailed out');
    const capSum = REBUILD_CAP_KEYS.filter((key) => key !== 'recent_user_per_msg').reduce(
      (sum, key) => sum + DEFAULT_REBUILD_CAPS[key],
      0,
    );
    const rawP50 = percentile(raw, 50);
    const rows: BenchRow[] = [
      { name: 'input size', value: inputChars / 1024, unit: 'KiB', note: `${inputTokens} tokens, ${n} runs each` },
      { name: REBUILD_RENDER_ROWS.rawP50, value: rawP50 * 1000, unit: 'µs' },
      { name: 'raw read of the same texts p99', value: percentile(raw, 99) * 1000, unit: 'µs' },
      { name: REBUILD_RENDER_ROWS.coldP50, value: percentile(cold, 50), unit: 'ms', note: 'fresh TokenCounter per run' },
      { name: REBUILD_RENDER_ROWS.coldP99, value: percentile(cold, 99), unit: 'ms' },
      { name: REBUILD_RENDER_ROWS.warmP50, value: percentile(warm, 50), unit: 'ms', note: 'shared cached counter' },
      { name: REBUILD_RENDER_ROWS.warmP99, value: percentile(warm, 99), unit: 'ms' },
      { name: REBUILD_RENDER_ROWS.ratioCold, value: percentile(cold, 50) / rawP50, unit: '×' },
      { name: REBUILD_RENDER_ROWS.ratioWarm, value: percentile(warm, 50) / rawP50, unit: '×' },
      { name: REBUILD_RENDER_ROWS.tokens, value: rendered.tokens, unit: 'tokens', note: `${rendered.sections.length} sections` },
      { name: REBUILD_RENDER_ROWS.capSum, value: capSum, unit: 'tokens', note: 'all caps except recent_user_per_msg' },
      { name: REBUILD_RENDER_ROWS.tokensVsCaps, value: rendered.tokens / capSum, unit: '×', note: 'framing included' },
    ];
    return { title: 'Rebuild context render (memory-store)', rows };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const section = await benchRebuildRender();
  console.log(`## ${section.title}`);
  for (const row of section.rows) console.log(`${row.name}: ${row.value.toFixed(2)} ${row.unit}${row.note ? `  (${row.note})` : ''}`);
}
