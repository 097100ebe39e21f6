import { describe, expect, it } from 'vitest';
import { renderCheckpointIndex } from '../../src/rebuild/checkpoint-index.ts';
import { DEFAULT_REBUILD_CAPS, type RebuildCapKey, resolveRebuildCaps } from '../../src/rebuild/rebuild-caps.ts';
import {
  REBUILD_SECTION_NAMES,
  type RebuildSectionName,
  renderRebuildContext,
} from '../../src/rebuild/rebuild-context.ts';
import type { LastMessageInfo } from '../../src/rebuild/rebuild-tail-reminder.ts';
import { loadPrompt } from '../../src/templates/prompt-registry.ts';
import { TokenCounter } from '../../src/tokens/token-counter.ts';
import { CHECKPOINT_HEADERS, MEMORY_HEADERS, baseInput, fullSizeInput, markdownFile, words } from './fixtures.ts';

// An independent counter (own cache) to re-count what the renderer reports.
const recount = new TokenCounter();
const prompt = (name: Parameters<typeof loadPrompt>[0]): string => loadPrompt(name).trimEnd();

describe('renderRebuildContext: order and shape', () => {
  const rendered = renderRebuildContext(fullSizeInput());

  it('renders every section in its order, joined by blank lines', () => {
    expect(rendered).not.toBeNull();
    if (rendered === null) return;
    expect(rendered.sections.map((s) => s.name)).toEqual([...REBUILD_SECTION_NAMES]);
    expect(rendered.text).toBe(rendered.sections.map((s) => s.text).join('\n\n'));
    const headings = [
      '## Checkpoint\n',
      prompt('rebuild-header'),
      '## Tasks ledger\n',
      '## Session checkpoint\n# Session checkpoint',
      '## Active writers\n',
      '## Recent user input (verbatim)\n',
      '## Project memory\n# Project memory',
      '## Global memory\n# Global memory',
      '## Session notes\n# Session notes',
      '## Memory keys index\n',
      prompt('rebuild-seam'),
      prompt('rebuild-tail-tool-calls'),
    ];
    const positions = headings.map((heading) => rendered.text.indexOf(heading));
    expect(positions.every((p) => p >= 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    expect(rendered.text.endsWith(prompt('rebuild-tail-tool-calls'))).toBe(true);
  });

  it('reports token counts that match the texts', () => {
    if (rendered === null) return;
    expect(rendered.tokens).toBe(recount.count(rendered.text));
    for (const section of rendered.sections) expect(section.tokens, section.name).toBe(recount.count(section.text));
  });

  it('is deterministic: same input, same text', () => {
    expect(renderRebuildContext(fullSizeInput())?.text).toBe(rendered?.text);
  });
});

describe('renderRebuildContext: caps', () => {
  const capOf: Record<Exclude<RebuildSectionName, 'checkpoint_index' | 'header' | 'seam' | 'tail'>, RebuildCapKey> = {
    tasks_ledger: 'tasks_ledger',
    checkpoint: 'checkpoint',
    uncovered: 'uncovered',
    active_writers: 'actor_ledger',
    recent_user: 'recent_user',
    project_memory: 'memory',
    global_memory: 'global',
    notes: 'notes',
    memory_keys: 'memory_titles',
  };

  it.each([
    ['default caps', DEFAULT_REBUILD_CAPS],
    [
      'small caps',
      resolveRebuildCaps({
        checkpoint: 900,
        memory: 700,
        global: 400,
        notes: 300,
        recent_user: 1_200,
        recent_user_per_msg: 250,
        tasks_ledger: 200,
        actor_ledger: 150,
        memory_titles: 120,
      }),
    ],
  ])('keeps every capped section within its cap, and fills it, with %s', (_label, caps) => {
    const rendered = renderRebuildContext(fullSizeInput({ caps }));
    expect(rendered).not.toBeNull();
    for (const [name, key] of Object.entries(capOf)) {
      const section = rendered?.sections.find((s) => s.name === name);
      expect(section, name).toBeDefined();
      const tokens = recount.count(section?.text ?? '');
      expect(tokens, `${name} ≤ ${key}`).toBeLessThanOrEqual(caps[key]);
      // Every input is far above its cap, so each section is actually filled, not starved (lists are cut at a
      // line end, so a small cap may leave up to about one line unused).
      expect(tokens, `${name} filled`).toBeGreaterThan(Math.min(caps[key] * 0.75, caps[key] - 100));
    }
    // Whole rendered context: at most the sum of the caps plus the fixed framing.
    const fixed = (rendered?.sections ?? [])
      .filter((s) => !(s.name in capOf))
      .reduce((sum, s) => sum + s.tokens, 0);
    const capSum = Object.values(capOf).reduce((sum, key) => sum + caps[key], 0);
    expect(rendered?.tokens ?? Infinity).toBeLessThanOrEqual(capSum + fixed + 20);
  });

  it('keeps the skeleton of section-aware files: every ## header survives a cut', () => {
    const caps = resolveRebuildCaps({ checkpoint: 1_500, memory: 800 });
    const rendered = renderRebuildContext(fullSizeInput({ caps }));
    const checkpoint = rendered?.sections.find((s) => s.name === 'checkpoint')?.text ?? '';
    for (const header of CHECKPOINT_HEADERS) expect(checkpoint).toContain(`## ${header}\n`);
    expect(checkpoint).toContain('[… section truncated to fit the token budget]');
    const memory = rendered?.sections.find((s) => s.name === 'project_memory')?.text ?? '';
    for (const header of MEMORY_HEADERS) expect(memory).toContain(`## ${header}\n`);
  });

  it('shows files that fit whole, verbatim', () => {
    const checkpoint = markdownFile('Session checkpoint', CHECKPOINT_HEADERS, 20);
    const rendered = renderRebuildContext(baseInput({ checkpoint, notes: '# Session notes\n\nremember port 8080\n' }));
    expect(rendered?.sections.find((s) => s.name === 'checkpoint')?.text).toBe(`## Session checkpoint\n${checkpoint.trim()}`);
    expect(rendered?.sections.find((s) => s.name === 'notes')?.text).toBe('## Session notes\n# Session notes\n\nremember port 8080');
  });

  it('leaves out the recent user input when recent_user is 0, and a section whose cap is 0', () => {
    const input = fullSizeInput({ caps: resolveRebuildCaps({ recent_user: 0, notes: 0 }) });
    const names = renderRebuildContext(input)?.sections.map((s) => s.name) ?? [];
    expect(names).not.toContain('recent_user');
    expect(names).not.toContain('notes');
    expect(names).toContain('checkpoint');
  });
});

describe('renderRebuildContext: writers and memory keys', () => {
  it('lists exactly the writers it is given (this session only), one line each, and omits the section when none', () => {
    const writers = [
      { writerId: 'w-s1-1', status: 'running', description: 'checkpoint at 60 %' },
      { writerId: 'w-s1-2', status: 'pending', description: 'queued\nre-run' },
    ];
    const rendered = renderRebuildContext(baseInput({ activeWriters: writers }));
    expect(rendered?.sections.find((s) => s.name === 'active_writers')?.text).toBe(
      '## Active writers\n- w-s1-1 — running, "checkpoint at 60 %"\n- w-s1-2 — pending, "queued re-run"',
    );
    expect(rendered?.text.match(/^- w-/gm)).toHaveLength(2);
    const none = renderRebuildContext(baseInput({ tasks: [{ id: 'T1', status: 'open', summary: 's' }] }));
    expect(none?.sections.map((s) => s.name)).not.toContain('active_writers');
  });

  it('drops checkpoint.md, notes.md and both MEMORY.md from the memory keys index, sorted and deduplicated', () => {
    const rendered = renderRebuildContext(
      baseInput({
        tasks: [{ id: 'T1', status: 'open', summary: 's' }],
        memoryKeys: [
          'sessions/s1/notes.md',
          'sessions/s1/checkpoint.md',
          'projects/p1/MEMORY.md',
          'global/MEMORY.md',
          './projects/p1/memory-zeta.md',
          'projects\\p1\\memory-alpha.md',
          'projects/p1/memory-zeta.md',
          'sessions/s1/tasks/T1/progress.md',
          'sessions/s1/checkpoint.invalid.md',
        ],
      }),
    );
    expect(rendered?.sections.find((s) => s.name === 'memory_keys')?.text).toBe(
      [
        '## Memory keys index',
        '- projects/p1/memory-alpha.md',
        '- projects/p1/memory-zeta.md',
        '- sessions/s1/checkpoint.invalid.md',
        '- sessions/s1/tasks/T1/progress.md',
      ].join('\n'),
    );
    const onlyPushed = renderRebuildContext(
      baseInput({ tasks: [{ id: 'T1', status: 'open', summary: 's' }], memoryKeys: ['sessions/s1/notes.md', 'global/MEMORY.md'] }),
    );
    expect(onlyPushed?.sections.map((s) => s.name)).not.toContain('memory_keys');
  });
});

describe('renderRebuildContext: early bail', () => {
  it('returns null when there is nothing to rebuild from', () => {
    expect(renderRebuildContext(baseInput())).toBeNull();
    expect(renderRebuildContext(baseInput({ checkpoint: '  \n\n', projectMemory: '', globalMemory: '\t' }))).toBeNull();
    // Notes, memory keys, blank user messages and a last message alone do not make a context.
    expect(
      renderRebuildContext(
        baseInput({
          notes: '# Session notes\n\nsomething',
          memoryKeys: ['projects/p1/memory-x.md'],
          recentUser: [{ id: 'u1', text: '  ' }],
          lastMessage: { role: 'assistant', finishReason: 'stop' },
        }),
      ),
    ).toBeNull();
    // User messages with recent_user disabled select no entry.
    expect(renderRebuildContext(baseInput({ recentUser: [{ id: 'u1', text: 'hi' }], caps: resolveRebuildCaps({ recent_user: 0 }) }))).toBeNull();
  });

  it.each([
    ['a task', { tasks: [{ id: 'T1', status: 'done', summary: 'x' }] as const }],
    ['a checkpoint', { checkpoint: '# Session checkpoint\n\nx' }],
    ['project memory', { projectMemory: '# Project memory\n\nx' }],
    ['global memory', { globalMemory: '# Global memory\n\nx' }],
    ['a writer', { activeWriters: [{ writerId: 'w1', status: 'running', description: 'd' }] }],
    ['a user message', { recentUser: [{ id: 'u1', text: 'please continue' }] }],
  ])('renders with only %s', (_label, overrides) => {
    const rendered = renderRebuildContext(baseInput(overrides));
    expect(rendered).not.toBeNull();
    expect(rendered?.sections.map((s) => s.name).slice(0, 3)).toEqual(['checkpoint_index', 'header', 'tasks_ledger']);
  });
});

describe('renderRebuildContext: tail reminder and index', () => {
  const tails: [LastMessageInfo | null, string | null][] = [
    [{ role: 'assistant', finishReason: 'tool_calls' }, 'rebuild-tail-tool-calls'],
    [{ role: 'assistant', finishReason: 'tool-calls' }, 'rebuild-tail-tool-calls'],
    [{ role: 'assistant', finishReason: 'stop' }, 'rebuild-tail-stop'],
    [{ role: 'assistant', finishReason: 'length' }, 'rebuild-tail-stop'],
    [{ role: 'assistant', finishReason: null }, 'rebuild-tail-stop'],
    [{ role: 'tool', finishReason: null }, 'rebuild-tail-tool'],
    [{ role: 'user', finishReason: null }, null],
    [{ role: 'system', finishReason: null }, null],
    [null, null],
  ];

  it.each(tails)('after %j ends with %s', (lastMessage, name) => {
    const rendered = renderRebuildContext(baseInput({ tasks: [{ id: 'T1', status: 'open', summary: 's' }], lastMessage }));
    const last = rendered?.sections.at(-1);
    if (name === null) {
      expect(last?.name).toBe('seam');
      expect(rendered?.text.endsWith(prompt('rebuild-seam'))).toBe(true);
    } else {
      expect(last?.name).toBe('tail');
      expect(last?.text).toBe(prompt(name as Parameters<typeof loadPrompt>[0]));
    }
  });

  it('opens with the checkpoint index block, or says there is no checkpoint yet', () => {
    const index = renderCheckpointIndex('/data/memory/sessions/s1/', '/data/memory/sessions/s1/checkpoint.md', true);
    expect(index).toMatch(/^## Checkpoint\n\nDirectory: \/data\/memory\/sessions\/s1\/\n/);
    expect(index).toContain('read("/data/memory/sessions/s1/checkpoint.md") for the full checkpoint');
    expect(renderCheckpointIndex('/d', '/d/checkpoint.md', false)).toBe('No checkpoints yet for this session.');
    const withCheckpoint = renderRebuildContext(baseInput({ checkpoint: '# Session checkpoint\n\n' + words(50) }));
    expect(withCheckpoint?.sections[0]?.text).toBe(
      renderCheckpointIndex('/data/memory/sessions/s1', '/data/memory/sessions/s1/checkpoint.md', true),
    );
    const without = renderRebuildContext(baseInput({ tasks: [{ id: 'T1', status: 'open', summary: 's' }] }));
    expect(without?.sections[0]?.text).toBe('No checkpoints yet for this session.');
  });

  it('self-contained: names no path of the memory files, asks for no read of them and lists no memory keys', () => {
    const input = fullSizeInput({ memoryKeys: ['sessions/s1/tasks/T1.md', 'projects/p/MEMORY.md'] });
    const local = renderRebuildContext(input);
    const remote = renderRebuildContext({ ...input, selfContained: true });
    expect(local?.text).toContain('/data/memory/sessions/s1');
    expect(local?.sections.map((s) => s.name)).toContain('memory_keys');
    expect(remote?.text).not.toContain('/data/memory');
    expect(remote?.text).not.toMatch(/read\(|search them/);
    expect(remote?.sections.map((s) => s.name)).not.toContain('memory_keys');
    expect(remote?.sections[0]?.text).toBe(prompt('rebuild-index-inline'));
    expect(remote?.sections[1]?.text).toBe(prompt('rebuild-header-inline'));
    // The checkpoint itself is there as it is in the local context.
    expect(remote?.sections.find((s) => s.name === 'checkpoint')?.text).toBe(local?.sections.find((s) => s.name === 'checkpoint')?.text);
  });
});
