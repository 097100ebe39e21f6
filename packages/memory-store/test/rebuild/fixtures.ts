import { DEFAULT_REBUILD_CAPS, type RebuildContextInput } from '../../src/index.ts';

const WORDS = [
  'checkpoint', 'session', 'token', 'writer', 'rebuild', 'memory', 'budget', 'context', 'agent', 'tool', 'result',
  'parser', 'fixture', 'module', 'config', 'deploy', 'retry', 'cache', 'index', 'schema', 'worker', 'stream',
  'the', 'a', 'of', 'to', 'and', 'with', 'from', 'when', 'keeps', 'fails', 'reads', 'writes', 'moves', 'splits',
];

/** Deterministic pseudo-random prose: `count` words from a linear congruential generator seeded by `seed`. */
export function words(count: number, seed = 1): string {
  let x = seed >>> 0 || 1;
  const out: string[] = [];
  for (let i = 0; i < count; i += 1) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    out.push(WORDS[(x >>> 8) % WORDS.length] ?? 'x');
    if (i % 14 === 13) out.push('.\n');
  }
  return out.join(' ').replace(/ \.\n /g, '.\n');
}

/** A markdown file with a `# title` and `sections` `## ` sections, each with an italic line and `wordsPer` words. */
export function markdownFile(title: string, sections: readonly string[], wordsPer: number, seed = 7): string {
  const parts = [`# ${title}`, ''];
  sections.forEach((header, index) => {
    parts.push(`## ${header}`, `_What goes in ${header}._`, '', words(wordsPer, seed + index), '');
  });
  return parts.join('\n');
}

export const CHECKPOINT_HEADERS = [
  '§1 Active intent', '§2 Next concrete action', '§3 Directives (this session)', '§4 Task tree', '§5 Current work',
  '§6 Files and code sections', '§7 Discovered knowledge (cross-task)', '§8 Errors and fixes', '§9 Live resources',
  '§10 Design decisions and discussion outcomes', '§11 Open notes',
];
export const MEMORY_HEADERS = ['Project context', 'Rules', 'Architecture decisions', 'Discovered durable knowledge'];

/** A minimal non-bailing input: one task, nothing else. */
export function baseInput(overrides: Partial<RebuildContextInput> = {}): RebuildContextInput {
  return {
    tasks: [],
    checkpoint: null,
    projectMemory: null,
    globalMemory: null,
    notes: null,
    activeWriters: [],
    recentUser: [],
    memoryKeys: [],
    lastMessage: null,
    sessionDir: '/data/memory/sessions/s1',
    checkpointPath: '/data/memory/sessions/s1/checkpoint.md',
    caps: DEFAULT_REBUILD_CAPS,
    ...overrides,
  };
}

/** Every input far above its default cap: the shape of a long session at its second or third overflow. */
export function fullSizeInput(overrides: Partial<RebuildContextInput> = {}): RebuildContextInput {
  return baseInput({
    tasks: Array.from({ length: 120 }, (_, i) => ({
      id: i % 4 === 0 ? `T${i}` : `T${i - (i % 4)}.${i % 4}`,
      ...(i % 4 === 0 ? {} : { parent_id: `T${i - (i % 4)}` }),
      status: (['open', 'in_progress', 'blocked', 'done', 'abandoned'] as const)[i % 5] ?? 'open',
      summary: words(30, i + 1).replace(/\n/g, ' '),
      focus: i === 8,
    })),
    checkpoint: markdownFile('Session checkpoint', CHECKPOINT_HEADERS, 1_400, 11),
    projectMemory: markdownFile('Project memory', MEMORY_HEADERS, 3_500, 23),
    globalMemory: markdownFile('Global memory', MEMORY_HEADERS, 2_000, 31),
    notes: [
      '# Session notes',
      ...Array.from({ length: 40 }, (_, i) => {
        const minute = String(i).padStart(2, '0');
        return `## [turn ${i + 1} · 2025-01-01T10:${minute}Z]\n${words(200, 100 + i)}`;
      }),
    ].join('\n\n'),
    activeWriters: Array.from({ length: 30 }, (_, i) => ({
      writerId: `writer-s1-${i}`,
      status: i % 2 === 0 ? 'running' : 'pending',
      description: `checkpoint writer for rung ${i}: ${words(8, i + 50).replace(/\n/g, ' ')}`,
    })),
    recentUser: Array.from({ length: 200 }, (_, i) => ({
      id: `msg-${String(i).padStart(4, '0')}`,
      text: i % 10 === 0 ? words(3_000, 500 + i) : words(40 + (i % 7) * 60, 500 + i),
    })),
    uncovered: Array.from({ length: 400 }, (_, i) => `- read {"path":"src/mod-${i}.ts"} → ${words(25, 900 + i).replace(/\n/g, ' ')}`),
    memoryKeys: [
      'global/MEMORY.md',
      'projects/p1/MEMORY.md',
      'sessions/s1/checkpoint.md',
      'sessions/s1/notes.md',
      ...Array.from({ length: 150 }, (_, i) => `projects/p1/memory-topic-${String(i).padStart(3, '0')}.md`),
      ...Array.from({ length: 60 }, (_, i) => `sessions/s1/tasks/T${i}/progress.md`),
    ],
    lastMessage: { role: 'assistant', finishReason: 'tool_calls' },
    ...overrides,
  });
}

/** Lone surrogates (a high half not followed by a low half, or a low half not preceded by a high half). */
export const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
