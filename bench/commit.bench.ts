import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { HistoryStore, commitFiles } from '@baton/memory-store';
import { EventLogCommitJournal, LmdbEventLog } from '@baton/runtime';
import type { BenchSection } from './bench-types.ts';

const RUNS = 60;

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

/** A checkpoint-sized set: checkpoint.md (~44 KB ≈ 11 000 tokens), a spillover, notes.md and MEMORY.md. */
function contents(i: number): Map<string, string> {
  return new Map([
    ['sessions/s1/checkpoint.md', `# Session checkpoint ${i}\n${'- a line of checkpoint content that changes a little\n'.repeat(800)}`],
    ['sessions/s1/checkpoint-orders.md', `# orders ${i}\n${'- spillover line\n'.repeat(200)}`],
    ['sessions/s1/notes.md', `# Session notes ${i}\n`],
    ['projects/p1/MEMORY.md', `# Project memory ${i}\n${'- durable fact\n'.repeat(300)}`],
  ]);
}

/**
 * Commit latency of a writer's staged set through the crash-safe protocol (history store, journaled intent in LMDB,
 * atomic replace of each file, journaled completion) vs plain `writeFile` of the same files (no durability).
 */
export async function benchCommit(): Promise<BenchSection> {
  const dir = await mkdtemp(join(tmpdir(), 'baton-bench-commit-'));
  const log = LmdbEventLog.open({ path: join(dir, 'events') });
  try {
    const memoryRoot = join(dir, 'memory');
    const history = new HistoryStore(join(dir, 'history'));
    const journal = new EventLogCommitJournal(log);
    const committed: number[] = [];
    const raw: number[] = [];
    for (const sub of ['sessions/s1', 'projects/p1']) await mkdir(join(dir, 'raw', sub), { recursive: true });
    for (let i = 0; i < RUNS; i++) {
      const set = contents(i);
      let t = process.hrtime.bigint();
      await commitFiles({ memoryRoot, history, journal, commitId: `c${i}`, writerId: `w${i}`, reason: 'writer', at: i }, set);
      committed.push(Number(process.hrtime.bigint() - t) / 1e6);
      t = process.hrtime.bigint();
      for (const [rel, data] of set) await writeFile(join(dir, 'raw', rel), data);
      raw.push(Number(process.hrtime.bigint() - t) / 1e6);
    }
    committed.sort((a, b) => a - b);
    raw.sort((a, b) => a - b);
    const p50 = percentile(committed, 50);
    const rawP50 = percentile(raw, 50);
    return {
      title: 'Memory commit (4 files, ~60 KB: history store + journaled intent + atomic replace + journaled completion)',
      rows: [
        { name: 'commit latency p50', value: p50, unit: 'ms', note: `${RUNS} commits, each file fsynced and renamed` },
        { name: 'commit latency p99', value: percentile(committed, 99), unit: 'ms' },
        { name: 'plain writeFile of the same files p50', value: rawP50, unit: 'ms', note: 'baseline: no fsync, no journal, not crash-safe' },
        { name: 'ratio commit/plain p50', value: p50 / rawP50, unit: '×' },
      ],
    };
  } finally {
    await log.close();
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const section = await benchCommit();
  console.log(section.title);
  for (const r of section.rows) console.log(`  ${r.name}: ${r.value.toFixed(2)} ${r.unit}${r.note ? `  (${r.note})` : ''}`);
}
