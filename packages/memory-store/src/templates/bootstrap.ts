import { mkdir, rename, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { errnoCode } from '../memory-errors.ts';
import type { MemoryPaths } from '../memory-paths.ts';
import { loadPrompt, type PromptName } from './prompt-registry.ts';

/** What {@link bootstrapMemory} did. */
export interface BootstrapResult {
  /** Absolute paths of the files this call created from a template (empty when all existed). */
  readonly created: string[];
}

/**
 * Prepares one session's part of the memory tree: creates the session, tasks and project
 * directories, renames a legacy lowercase `memory.md` to `MEMORY.md`, and writes `checkpoint.md`, `MEMORY.md` and
 * `notes.md` from their templates **only when absent**. Existing files are never touched, so a failed writer or a
 * second bootstrap can never clobber memory, and any number of concurrent calls leave exactly one intact copy of
 * each file (creation uses the exclusive `wx` flag; the losers see `EEXIST`).
 *
 * @throws the underlying fs error for anything other than the expected races (permissions, full disk, …).
 */
export async function bootstrapMemory(paths: MemoryPaths): Promise<BootstrapResult> {
  await Promise.all([
    mkdir(paths.sessionDir, { recursive: true }),
    mkdir(paths.tasksDir, { recursive: true }),
    mkdir(paths.projectDir, { recursive: true }),
  ]);
  await migrateLegacyMemory(paths);

  const targets: readonly [string, PromptName][] = [
    [paths.checkpoint, 'checkpoint-template'],
    [paths.memory, 'memory-template'],
    [paths.notes, 'notes-template'],
  ];
  const created: string[] = [];
  for (const [file, template] of targets) {
    if (await createIfAbsent(file, loadPrompt(template))) created.push(file);
  }
  return { created };
}

/**
 * Renames `projects/<pid>/memory.md` to `MEMORY.md` when only the legacy name exists. A concurrent caller that
 * renamed it first makes our rename fail with `ENOENT`, which is the outcome we wanted anyway.
 */
export async function migrateLegacyMemory(paths: MemoryPaths): Promise<void> {
  if (await exists(paths.memory)) return;
  try {
    await rename(path.join(paths.projectDir, 'memory.md'), paths.memory);
  } catch (error) {
    if (errnoCode(error) !== 'ENOENT') throw error;
  }
}

async function createIfAbsent(file: string, text: string): Promise<boolean> {
  try {
    await writeFile(file, text, { encoding: 'utf8', flag: 'wx' });
    return true;
  } catch (error) {
    if (errnoCode(error) === 'EEXIST') return false;
    throw error;
  }
}

async function exists(file: string): Promise<boolean> {
  try {
    await stat(file);
    return true;
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return false;
    throw error;
  }
}
