import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { memoryPaths } from '@baton/memory-store';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { liveBase, stageMemory, stagedChanges } from '../../src/writer/staging.ts';

describe('writer staging', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'baton-staging-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const ids = { projectId: 'p1', sessionId: 's1' };

  it('copies the writer-owned files and task journals, bootstraps the missing ones only in the staging tree', async () => {
    const live = memoryPaths(join(dir, 'memory'), ids);
    await mkdir(join(live.tasksDir, 'T1'), { recursive: true });
    await writeFile(live.notes, 'my notes');
    await writeFile(join(live.sessionDir, 'checkpoint-orders.md'), 'spill');
    await writeFile(join(live.sessionDir, 'scratch.md'), 'not the writer’s');
    await writeFile(join(live.tasksDir, 'T1', 'progress.md'), 'journal');
    const staged = await stageMemory(live, join(dir, 'staging', 'w1'), ids);
    expect(await readFile(staged.notes, 'utf8')).toBe('my notes');
    expect(await readFile(join(staged.sessionDir, 'checkpoint-orders.md'), 'utf8')).toBe('spill');
    expect(await readFile(join(staged.tasksDir, 'T1', 'progress.md'), 'utf8')).toBe('journal');
    expect(existsSync(join(staged.sessionDir, 'scratch.md'))).toBe(false);
    expect(await readFile(staged.checkpoint, 'utf8')).toContain('## §11');
    expect(existsSync(live.checkpoint)).toBe(false);
    // Only what differs from live is a change: the new checkpoint and MEMORY.md, not the copied notes.
    const changes = [...(await stagedChanges(staged, live)).changes.keys()].sort();
    expect(changes).toEqual([relative(staged.root, staged.memory), relative(staged.root, staged.checkpoint)].sort());
  });

  it('migrates a legacy lowercase memory.md so the writer sees its content', async () => {
    const live = memoryPaths(join(dir, 'memory'), ids);
    await mkdir(live.projectDir, { recursive: true });
    await writeFile(join(live.projectDir, 'memory.md'), '# Project memory\nlegacy');
    const staged = await stageMemory(live, join(dir, 'staging', 'w2'), ids);
    expect(await readFile(staged.memory, 'utf8')).toContain('legacy');
    expect(existsSync(join(live.projectDir, 'memory.md'))).toBe(false);
  });

  it('does not overwrite a shared file another writer committed since it was staged', async () => {
    const live = memoryPaths(join(dir, 'memory'), ids);
    await mkdir(live.projectDir, { recursive: true });
    await writeFile(live.memory, '# Project memory\nv1');
    const staged = await stageMemory(live, join(dir, 'staging', 'w3'), ids);
    const base = await liveBase(staged, live);
    await writeFile(staged.memory, '# Project memory\nmine');
    await writeFile(staged.notes, 'notes');
    // Another session's writer commits MEMORY.md meanwhile.
    await writeFile(live.memory, '# Project memory\ntheirs');
    const { changes, conflicts } = await stagedChanges(staged, live, base);
    expect(conflicts).toEqual([relative(staged.root, staged.memory)]);
    expect([...changes.keys()]).not.toContain(relative(staged.root, staged.memory));
    expect([...changes.keys()]).toContain(relative(staged.root, staged.notes));
  });
});
