/**
 * Memory-store benchmark: validating an ~11 000-token checkpoint (cold: every section tokenised; warm: the token
 * cache holds every section, as on a writer's re-validation; one section edited: the realistic re-entry), token
 * counting throughput of `TokenCounter` (its compact counter) against raw gpt-tokenizer `countTokens` on the same
 * ~1 MiB of text, on a new ~1 MiB text each run, and on ~1 KB messages counted once each (as the daemon counts
 * appended messages), and a cache hit against a cold count. Texts are generated deterministically (markdown prose, lists, paths, numbers).
 *
 * Standalone: `npx tsx --conditions=@baton/source bench/memory-store.bench.ts` (env: MEMSTORE_BENCH_RUNS, default 41).
 */
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { countTokens as rawCountTokens } from 'gpt-tokenizer/encoding/o200k_base';
import {
  CHECKPOINT_BUDGET_KEYS,
  DEFAULT_BUDGETS,
  TokenCounter,
  countTokensOnce,
  loadPrompt,
  parseSections,
  validateMemoryFiles,
  type ValidateMemoryFilesInput,
} from '@baton/memory-store';
import type { BenchRow, BenchSection } from './bench-types.ts';

export interface MemoryStoreBenchOptions {
  /** Runs per validation measurement; the median is reported (default 41, at least 30). */
  readonly runs?: number;
  /** Size of the throughput text in bytes (default 1 MiB). */
  readonly textBytes?: number;
}

/** Row names the targets read. */
export const MEMORY_STORE_ROWS = {
  validateCold: 'validate ~11k-token checkpoint, cold cache (median)',
  validateWarm: 'validate ~11k-token checkpoint, warm cache (median)',
  validateOneEdit: 'validate after one section edited (median)',
  counterTps: 'TokenCounter.count, cold cache',
  rawTps: 'gpt-tokenizer countTokens',
  counterVsRaw: 'TokenCounter / raw throughput',
  counterVsRawFresh: 'TokenCounter / raw throughput, a new text each run',
  messagesVsRaw: 'countTokensOnce / raw countTokens, ~1 KB messages',
  cacheHit: 'TokenCounter.count, cache hit (median)',
  coldCount: 'TokenCounter.count, cold (median)',
  hitSpeedup: 'cache hit speed-up over a cold count',
} as const;

// Vocabulary: every word of the shipped prompts plus generated identifiers, so the text is not so repetitive that
// gpt-tokenizer's internal merge cache makes raw counting unrealistically fast.
const PROMPT_WORDS = [
  ...new Set(
    ['writer-task', 'checkpoint-template', 'memory-template', 'extraction-required', 'validation-reflection'].flatMap((name) =>
      loadPrompt(name as Parameters<typeof loadPrompt>[0]).split(/[^A-Za-z']+/).filter((w) => w.length > 1).map((w) => w.toLowerCase()),
    ),
  ),
];
const SYLLABLES = ['ka', 'lo', 'mer', 'tis', 'ven', 'dra', 'qu', 'zo', 'pel', 'ström', 'ix', 'nau', 'bre', 'cy', 'ful', 'gä'];
const PATHS = ['src/orders/create.ts', 'packages/runtime/src/writer/writer-run.ts', 'test/orders.test.ts', 'docker-compose.yml'];

/** Deterministic markdown of about `bytes` bytes: prose paragraphs, bullets with code spans, paths and numbers. */
function generateText(bytes: number, seed = 7): string {
  let x = seed >>> 0;
  const next = (n: number): number => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    return (x >>> 8) % n;
  };
  const identifier = (): string => {
    let id = '';
    for (let i = 0, n = 2 + next(3); i < n; i++) {
      const syllable = SYLLABLES[next(SYLLABLES.length)] as string;
      id += i > 0 && next(2) === 0 ? syllable.charAt(0).toUpperCase() + syllable.slice(1) : syllable;
    }
    return id;
  };
  const word = (): string => (next(8) === 0 ? identifier() : (PROMPT_WORDS[next(PROMPT_WORDS.length)] as string));
  const sentence = (): string => {
    const n = 6 + next(14);
    const parts: string[] = [];
    for (let i = 0; i < n; i++) {
      const r = next(20);
      if (r === 0) parts.push(`\`${PATHS[next(PATHS.length)]}:${1 + next(400)}\``);
      else if (r === 1) parts.push(String(next(100_000)));
      else if (r === 2) parts.push(`**${word()}**`);
      else parts.push(word());
    }
    const text = parts.join(' ');
    return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
  };
  const chunks: string[] = [];
  let size = 0;
  while (size < bytes) {
    const kind = next(4);
    const chunk =
      kind === 0
        ? `## ${word()} ${word()}\n\n`
        : kind === 1
          ? `${Array.from({ length: 2 + next(4) }, () => `- ${sentence()}`).join('\n')}\n\n`
          : `${Array.from({ length: 2 + next(3) }, sentence).join(' ')}\n\n`;
    chunks.push(chunk);
    size += Buffer.byteLength(chunk);
  }
  return chunks.join('').slice(0, bytes);
}

/** The checkpoint template with every section filled to within 20 tokens of its default budget. */
function elevenThousandTokenCheckpoint(counter: TokenCounter): string {
  const template = loadPrompt('checkpoint-template');
  const sections = parseSections(template);
  let out = template.slice(0, sections[0]?.start ?? 0);
  sections.forEach((section, index) => {
    const key = CHECKPOINT_BUDGET_KEYS[index] ?? '§1';
    const budget = DEFAULT_BUDGETS.checkpoint.sections[key];
    const quote = index === 0 ? '> "Fix the 500 on POST /orders and keep the service on port 8081."\n\n' : '';
    const pool = generateText(budget * 6, 100 + index).replace(/^## /gm, '### ');
    const build = (chars: number): string => `${section.header}\n${section.italic}\n\n${quote}${pool.slice(0, chars).trimEnd()}\n\n`;
    let low = 0;
    let high = pool.length;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if (counter.count(build(mid)) <= budget - 20) low = mid;
      else high = mid - 1;
    }
    out += build(low);
  });
  return out;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

function time(fn: () => void): number {
  const start = performance.now();
  fn();
  return performance.now() - start;
}

const round = (x: number, digits = 3): number => Math.round(x * 10 ** digits) / 10 ** digits;

function memoryStoreSection(options: MemoryStoreBenchOptions): BenchSection {
  const runs = Math.max(30, options.runs ?? 41);
  const textBytes = options.textBytes ?? 1024 * 1024;

  // Load the tokenizer before anything is timed: its first use costs a few hundred ms once per process.
  const builder = new TokenCounter();
  const checkpoint = elevenThousandTokenCheckpoint(builder);
  const checkpointTokens = builder.count(checkpoint);
  const input = (counter: TokenCounter, text = checkpoint): ValidateMemoryFilesInput => ({
    checkpointPath: '/bench/memory/sessions/s1/checkpoint.md',
    checkpoint: text,
    memoryPath: '/bench/memory/projects/p1/MEMORY.md',
    memory: loadPrompt('memory-template'),
    previousMemory: null,
    template: loadPrompt('checkpoint-template'),
    memoryTemplate: loadPrompt('memory-template'),
    userRequestExists: true,
    spilloverExists: () => true,
    budgets: DEFAULT_BUDGETS,
    counter,
  });
  const firstPass = validateMemoryFiles(input(new TokenCounter()));
  if (firstPass.length > 0) throw new Error(`the bench checkpoint should validate: ${JSON.stringify(firstPass)}`);

  // Cold: a fresh cache each run, so every section is tokenised.
  const cold: number[] = [];
  for (let i = 0; i < runs; i++) {
    const counter = new TokenCounter();
    cold.push(time(() => validateMemoryFiles(input(counter))));
  }
  // Warm: one counter, the same text re-validated (the cache holds every section).
  const warmCounter = new TokenCounter();
  validateMemoryFiles(input(warmCounter));
  const warm: number[] = [];
  for (let i = 0; i < runs; i++) warm.push(time(() => validateMemoryFiles(input(warmCounter))));
  // One section edited per run (a new §11 line each time): only that section is tokenised again.
  const editCounter = new TokenCounter();
  validateMemoryFiles(input(editCounter));
  const oneEdit: number[] = [];
  for (let i = 0; i < runs; i++) {
    const edited = `${checkpoint.trimEnd()}\n- edit ${i}: re-validation after one change\n`;
    oneEdit.push(time(() => validateMemoryFiles(input(editCounter, edited))));
  }

  // Throughput on ~1 MiB: raw gpt-tokenizer against TokenCounter with a cold cache (its compact counter, plus its
  // hashing and bookkeeping). Both with special tokens counted as plain text, as TokenCounter does. Both tokenizers
  // keep the counts of pieces they merged (gpt-tokenizer 100 000, the compact counter 4 096): counting the same text
  // again merges almost nothing, so they are also timed on a text neither has seen, a new one each run.
  const text = generateText(textBytes);
  const plain = { disallowedSpecial: new Set<string>() };
  const tokens = rawCountTokens(text, plain);
  if (new TokenCounter().count(text) !== tokens) throw new Error('TokenCounter and gpt-tokenizer disagree on the bench text');
  const throughputRuns = 5;
  const raw: number[] = [];
  const counted: number[] = [];
  const rawFresh: number[] = [];
  const countedFresh: number[] = [];
  let freshTokens = 0;
  for (let i = 0; i < throughputRuns; i++) {
    raw.push(time(() => rawCountTokens(text, plain)));
    const counter = new TokenCounter();
    counted.push(time(() => counter.count(text)));
    const fresh = generateText(textBytes, 100 + i);
    let n = 0;
    rawFresh.push(time(() => (n = rawCountTokens(fresh, plain))));
    countedFresh.push(time(() => new TokenCounter().count(fresh)));
    freshTokens += n;
  }
  const rawTps = tokens / (median(raw) / 1000);
  const counterTps = tokens / (median(counted) / 1000);
  const freshRatio = median(rawFresh) / median(countedFresh);

  // The same text as ~1 KB messages, each counted once (countTokensOnce: no count cache), against gpt-tokenizer's
  // countTokens on the same messages (both piece caches warm from the runs above).
  const messages = Array.from({ length: Math.ceil(text.length / 1024) }, (_, i) => text.slice(i * 1024, (i + 1) * 1024));
  const onceMs: number[] = [];
  const rawMessagesMs: number[] = [];
  for (let i = 0; i < throughputRuns; i++) {
    onceMs.push(time(() => messages.reduce((sum, m) => sum + countTokensOnce(m), 0)));
    rawMessagesMs.push(time(() => messages.reduce((sum, m) => sum + rawCountTokens(m, plain), 0)));
  }

  // A cache hit against a cold count of the same ~1 MiB text (a fresh string object each time, so the hit pays
  // for hashing the content, not for a pointer comparison).
  const hitCounter = new TokenCounter();
  hitCounter.count(text);
  const hits: number[] = [];
  for (let i = 0; i < runs; i++) {
    const copy = Buffer.from(text, 'utf8').toString('utf8');
    hits.push(time(() => hitCounter.count(copy)));
  }
  const hitMs = median(hits);
  const coldMs = median(counted);

  const rows: BenchRow[] = [
    { name: MEMORY_STORE_ROWS.validateCold, value: round(median(cold)), unit: 'ms', note: `${checkpointTokens} tokens, ${Buffer.byteLength(checkpoint)} B, ${runs} runs` },
    { name: MEMORY_STORE_ROWS.validateWarm, value: round(median(warm)), unit: 'ms', note: `target < 5 ms; ${runs} runs` },
    { name: MEMORY_STORE_ROWS.validateOneEdit, value: round(median(oneEdit)), unit: 'ms', note: `§11 changed each run; ${runs} runs` },
    { name: MEMORY_STORE_ROWS.counterTps, value: Math.round(counterTps), unit: 'tokens/s', note: `${tokens} tokens in ${textBytes} B, median of ${throughputRuns}` },
    { name: MEMORY_STORE_ROWS.rawTps, value: Math.round(rawTps), unit: 'tokens/s', note: `same text, median of ${throughputRuns}` },
    { name: MEMORY_STORE_ROWS.counterVsRaw, value: round(counterTps / rawTps, 2), unit: '×', note: 'throughput ratio, same text each run (piece caches warm); same run' },
    {
      name: MEMORY_STORE_ROWS.counterVsRawFresh,
      value: round(freshRatio, 2),
      unit: '×',
      note: `throughput ratio, a new ~1 MiB text each run (${Math.round(freshTokens / throughputRuns)} tokens), ${round(median(countedFresh), 1)} ms vs ${round(median(rawFresh), 1)} ms; same run`,
    },
    {
      name: MEMORY_STORE_ROWS.messagesVsRaw,
      value: round(median(rawMessagesMs) / median(onceMs), 2),
      unit: '×',
      note: `throughput ratio, ${messages.length} messages, ${round(median(onceMs), 1)} ms vs ${round(median(rawMessagesMs), 1)} ms; same run`,
    },
    { name: MEMORY_STORE_ROWS.cacheHit, value: round(hitMs), unit: 'ms', note: `~1 MiB, ${runs} runs` },
    { name: MEMORY_STORE_ROWS.coldCount, value: round(coldMs), unit: 'ms', note: '~1 MiB' },
    { name: MEMORY_STORE_ROWS.hitSpeedup, value: round(coldMs / hitMs, 1), unit: '×', note: 'target ≥ 10×' },
  ];
  return { title: 'Memory store (validator, token counting)', rows };
}

/** The section as a promise like the other benches; the work is synchronous, and a throw rejects (as from an async function). */
export function benchMemoryStore(options: MemoryStoreBenchOptions = {}): Promise<BenchSection> {
  return new Promise((resolve) => resolve(memoryStoreSection(options)));
}

/** Target lines for `bench/main.ts`: warm validation < 5 ms, cache hit ≥ 10× faster than a cold count. */
export function memoryStoreTargets(section: BenchSection | undefined): {
  label: string;
  value: number | undefined;
  unit: string;
  target: string;
  pass: (value: number) => boolean;
}[] {
  const value = (name: string): number | undefined => section?.rows.find((r) => r.name === name)?.value;
  return [
    { label: 'memory store: warm validation median', value: value(MEMORY_STORE_ROWS.validateWarm), unit: 'ms', target: '< 5', pass: (v) => v < 5 },
    { label: 'memory store: cache hit vs cold count', value: value(MEMORY_STORE_ROWS.hitSpeedup), unit: '×', target: '≥ 10', pass: (v) => v >= 10 },
  ];
}

const invokedPath = process.argv[1];
if (invokedPath !== undefined && import.meta.url === pathToFileURL(invokedPath).href) {
  const raw = process.env['MEMSTORE_BENCH_RUNS'];
  const section = await benchMemoryStore(raw === undefined || raw === '' ? {} : { runs: Number(raw) });
  console.log(section.title);
  for (const row of section.rows) {
    console.log(`  ${row.name.padEnd(56)} ${String(row.value).padStart(12)} ${row.unit}${row.note ? `  (${row.note})` : ''}`);
  }
}
