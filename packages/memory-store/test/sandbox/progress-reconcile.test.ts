import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MemoryStoreError } from '../../src/memory-errors.ts';
import {
  diffProgress,
  parseReconcileMarkers,
  parseWrittenAt,
  renderProgressBlock,
  stampWrittenAt,
} from '../../src/sandbox/progress-reconcile.ts';
import { loadPrompt } from '../../src/templates/prompt-registry.ts';
import { useTempDirs } from '../temp-dir.ts';

const tempDir = useTempDirs();

const JOURNAL = '# Task progress\n\n## §1 Task identity\nT1\n';

function checkpointWith(taskTree: string, elsewhere = '(none yet)'): string {
  return [
    '# Session checkpoint',
    '',
    '## §3 Directives (this session)',
    '_Italic._',
    '',
    elsewhere,
    '',
    '## §4 Task tree',
    '_Italic._',
    '',
    taskTree,
    '',
    '## §5 Current work',
    '_Italic._',
    '',
    elsewhere,
    '',
  ].join('\n');
}

describe('parseWrittenAt', () => {
  it.each([
    ['a stamped journal', `---\nwritten-at: 1718000000000\n---\n${JOURNAL}`, 1718000000000],
    ['other keys around it', '---\nauthor: T1\nwritten-at:42\nmode: x\n---\nbody', 42],
    ['a finite non-integer', '---\nwritten-at: 1.5e3\n---\n', 1500],
    ['no frontmatter', JOURNAL, null],
    ['frontmatter not at the very start', `\n---\nwritten-at: 1\n---\n${JOURNAL}`, null],
    ['an unclosed frontmatter', '---\nwritten-at: 1\n', null],
    ['a closing line without its newline', '---\nwritten-at: 1\n---', null],
    ['CRLF line ends', '---\r\nwritten-at: 1\r\n---\r\n', null],
    ['no written-at line', '---\nauthor: T1\n---\n', null],
    ['an empty frontmatter', '---\n---\nwritten-at: 5\n', null],
    ['written-at only in the body', `---\nauthor: x\n---\nwritten-at: 7\n`, null],
    ['an indented key', '---\n  written-at: 1\n---\n', null],
    ['a non-numeric value', '---\nwritten-at: yesterday\n---\n', null],
    ['an empty value', '---\nwritten-at:   \n---\n', null],
    ['an infinite value', '---\nwritten-at: Infinity\n---\n', null],
  ])('%s', (_label, text, expected) => {
    expect(parseWrittenAt(text)).toBe(expected);
  });
});

describe('stampWrittenAt', () => {
  it('prepends a frontmatter to an unstamped journal', () => {
    expect(stampWrittenAt(JOURNAL, 1000)).toBe(`---\nwritten-at: 1000\n---\n${JOURNAL}`);
  });

  it('replaces an existing leading frontmatter, other keys included, keeping the body byte for byte', () => {
    const stamped = stampWrittenAt(`---\nauthor: T1\nwritten-at: 5\n---\n${JOURNAL}`, 2000);
    expect(stamped).toBe(`---\nwritten-at: 2000\n---\n${JOURNAL}`);
    expect(stampWrittenAt(stamped, 3000)).toBe(`---\nwritten-at: 3000\n---\n${JOURNAL}`);
    expect(stampWrittenAt('---\n---\nbody', 4)).toBe('---\nwritten-at: 4\n---\nbody');
  });

  it('treats an unclosed block as body and round-trips through parseWrittenAt', () => {
    const text = '---\nnot closed\n';
    const stamped = stampWrittenAt(text, 7);
    expect(stamped).toBe(`---\nwritten-at: 7\n---\n${text}`);
    expect(parseWrittenAt(stamped)).toBe(7);
    expect(parseWrittenAt(stampWrittenAt('', 0))).toBe(0);
  });

  it('rejects a stamp that is not a non-negative integer', () => {
    for (const bad of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => stampWrittenAt(JOURNAL, bad)).toThrow(MemoryStoreError);
    }
  });
});

describe('parseReconcileMarkers', () => {
  it('reads markers from §4 only, ignoring backtick-quoted ones and keeping the largest stamp', () => {
    const tree = [
      '- 🔄 T1 Build the guard (progress: tasks/T1/progress.md, last-reconciled-written-at: 100)',
      '  - ✅ T1.2 Tests (progress: tasks/T1.2/progress.md, last-reconciled-written-at: 7)',
      '- 🔵 T2 Docs `(progress: tasks/T2/progress.md, last-reconciled-written-at: 999)`',
      '- T1 again (progress: tasks/T1/progress.md, last-reconciled-written-at: 150)',
      '- T3 (progress: tasks/T3/progress.md, last-reconciled-written-at: )',
    ].join('\n');
    const elsewhere = 'quoted (progress: tasks/T9/progress.md, last-reconciled-written-at: 1)';
    expect(Object.fromEntries(parseReconcileMarkers(checkpointWith(tree, elsewhere)))).toEqual({ T1: 150, 'T1.2': 7 });
  });

  it('finds none without a §4 section', () => {
    expect(parseReconcileMarkers('(progress: tasks/T1/progress.md, last-reconciled-written-at: 1)').size).toBe(0);
  });
});

describe('diffProgress', () => {
  async function journal(tasksDir: string, taskId: string, text: string): Promise<void> {
    await mkdir(path.join(tasksDir, taskId), { recursive: true });
    await writeFile(path.join(tasksDir, taskId, 'progress.md'), text);
  }

  it('reports NEW and CHANGED journals in task order and skips the rest', async () => {
    const base = await tempDir();
    const tasksDir = path.join(base, 'tasks');
    await journal(tasksDir, 'T1', stampWrittenAt(JOURNAL, 300));
    await journal(tasksDir, 'T2', stampWrittenAt(JOURNAL, 200));
    await journal(tasksDir, 'T3', stampWrittenAt(JOURNAL, 100));
    await journal(tasksDir, 'T4', stampWrittenAt(JOURNAL, 50));
    await journal(tasksDir, 'T5', JOURNAL);
    await mkdir(path.join(tasksDir, 'T6'));
    await mkdir(path.join(tasksDir, 'T7', 'progress.md'), { recursive: true });
    await writeFile(path.join(base, 'elsewhere.md'), stampWrittenAt(JOURNAL, 1));
    await mkdir(path.join(tasksDir, 'T8'));
    await symlink(path.join(base, 'elsewhere.md'), path.join(tasksDir, 'T8', 'progress.md'));
    await journal(base, 'T11', stampWrittenAt(JOURNAL, 9));
    await symlink(path.join(base, 'T11'), path.join(tasksDir, 'T11'));
    await journal(tasksDir, 'T10', stampWrittenAt(JOURNAL, 1));
    await journal(tasksDir, 'T1.2', stampWrittenAt(JOURNAL, 8));
    await writeFile(path.join(tasksDir, 'T12'), stampWrittenAt(JOURNAL, 5));
    const tree = [
      '- T1 `(progress: tasks/T1/progress.md, last-reconciled-written-at: 300)`',
      '- T2 (progress: tasks/T2/progress.md, last-reconciled-written-at: 100)',
      '- T3 (progress: tasks/T3/progress.md, last-reconciled-written-at: 100)',
      '- T4 (progress: tasks/T4/progress.md, last-reconciled-written-at: 100)',
    ].join('\n');

    const errors: unknown[] = [];
    const items = await diffProgress(tasksDir, checkpointWith(tree), { onError: (error) => errors.push(error) });
    expect(items).toEqual([
      { taskId: 'T1', status: 'NEW', writtenAt: 300 },
      { taskId: 'T1.2', status: 'NEW', writtenAt: 8 },
      { taskId: 'T2', status: 'CHANGED', writtenAt: 200, prior: 100 },
      { taskId: 'T10', status: 'NEW', writtenAt: 1 },
    ]);
    expect(errors).toEqual([]);
  });

  it('reports nothing for a missing tasks directory, without an error', async () => {
    const errors: unknown[] = [];
    const base = await tempDir();
    const items = await diffProgress(path.join(base, 'tasks'), '', { onError: (error) => errors.push(error) });
    expect(items).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('reports an unexpected error and returns nothing', async () => {
    const base = await tempDir();
    const notADir = path.join(base, 'tasks');
    await writeFile(notADir, 'x');
    const errors: unknown[] = [];
    expect(await diffProgress(notADir, '', { onError: (error) => errors.push(error) })).toEqual([]);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ code: 'ENOTDIR' });
    expect(await diffProgress(notADir, '')).toEqual([]);
  });
});

describe('renderProgressBlock', () => {
  it('is empty when nothing changed', () => {
    expect(renderProgressBlock([])).toBe('');
  });

  it('renders the heading, one line per item, a blank line and the instruction', () => {
    const block = renderProgressBlock([
      { taskId: 'T1', status: 'NEW', writtenAt: 300 },
      { taskId: 'T2', status: 'CHANGED', writtenAt: 200, prior: 100 },
    ]);
    const instruction = loadPrompt('subagent-progress').trimEnd();
    expect(block).toBe(
      'SUBAGENT PROGRESS to integrate (since last reconcile):\n' +
        '  - T1 (NEW, written-at=300)\n' +
        '  - T2 (CHANGED, written-at=200, prior=100)\n' +
        '\n' +
        instruction,
    );
    expect(instruction).toContain('last-reconciled-written-at');
    expect(instruction).toContain('progress.md');
  });
});
