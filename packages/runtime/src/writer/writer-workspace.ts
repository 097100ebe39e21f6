import { createHash } from 'node:crypto';
import { copyFile, mkdir, readFile, readdir, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import {
  HistoryStore,
  commitFiles,
  createWriterFiles,
  decideValidation,
  diffProgress,
  loadPrompt,
  memoryPaths,
  renderProgressBlock,
  validateMemoryFiles,
  type Budgets,
  type CommitJournal,
  type MemoryPaths,
  type Violation,
  type WriterFiles,
} from '@baton/memory-store';
import type { SharedFilesPort } from '../memory/shared-files-port.ts';
import { discardStaging, liveBase, stageMemory, stagedChanges, type StagedBase } from './staging.ts';

export interface WriterWorkspaceOptions {
  readonly memoryRoot: string;
  /** `<data>/staging/<writer-id>`: this writer's staged copy of the memory tree. */
  readonly stagingRoot: string;
  readonly history: HistoryStore;
  readonly journal: CommitJournal;
  readonly budgets: Budgets;
  readonly ids: { readonly projectId: string; readonly sessionId: string };
  readonly writerId: string;
  readonly clock: () => number;
  /**
   * Cluster mode: the project's memory files are shared by every daemon. They are brought up to the newest shared
   * version before staging, and committed through `shared` (a conflict when another daemon committed first).
   */
  readonly shared?: SharedFilesPort;
}

/** A verdict of the validator, as the writer machine consumes it plus the violations for the reflection text. */
export interface WorkspaceVerdict {
  readonly errors: string[];
  readonly extract: string[];
  readonly warnings: string[];
  readonly violations: readonly Violation[];
  /** A digest of the draft the validator read (the staged files and their spillovers). */
  readonly draftHash: string;
}

const describe = (v: Violation): string => `${v.file}: ${v.rule}: ${v.detail}`;

/**
 * A writer's staged workspace: the writer edits copies under its staging root; the validator reads the
 * copies; a commit replaces the live files atomically and records every version; anything else leaves the live
 * tree untouched.
 */
export class WriterWorkspace {
  readonly live: MemoryPaths;
  readonly #o: WriterWorkspaceOptions;
  #staged: MemoryPaths | null = null;
  #files: WriterFiles | null = null;
  #base: StagedBase | undefined;
  /** The shared version of each project file when it was staged (cluster mode). */
  #sharedBase: Readonly<Record<string, number>> = {};

  constructor(options: WriterWorkspaceOptions) {
    this.#o = options;
    this.live = memoryPaths(options.memoryRoot, options.ids);
  }

  /** The staged paths the writer is told to use. */
  get staged(): MemoryPaths {
    if (this.#staged === null) throw new Error('workspace used before prepare');
    return this.#staged;
  }

  get files(): WriterFiles {
    if (this.#files === null) throw new Error('workspace used before prepare');
    return this.#files;
  }

  async prepare(): Promise<void> {
    if (this.#o.shared !== undefined) this.#sharedBase = await this.#o.shared.sync(this.#o.ids.projectId);
    this.#staged = await stageMemory(this.live, this.#o.stagingRoot, this.#o.ids);
    this.#base = await liveBase(this.#staged, this.live);
    this.#files = createWriterFiles(this.#staged);
  }

  /** The SUBAGENT PROGRESS block for the writer task (empty when no task journal changed). */
  async progressBlock(): Promise<string> {
    const checkpoint = await readFile(this.staged.checkpoint, 'utf8').catch(() => '');
    return renderProgressBlock(await diffProgress(this.staged.tasksDir, checkpoint));
  }

  async validate(userRequestExists: boolean): Promise<WorkspaceVerdict> {
    const staged = this.staged;
    const read = async (p: string): Promise<string | null> => await readFile(p, 'utf8').catch(() => null);
    const spillovers = new Map<string, string | null>();
    for (const dir of [staged.sessionDir, staged.projectDir]) {
      for (const name of await readdir(dir).catch(() => [] as string[])) {
        if (/^(?:checkpoint|MEMORY)-.+\.md$/.test(name)) spillovers.set(name, await read(join(dir, name)));
      }
    }
    const checkpoint = await read(staged.checkpoint);
    const memory = await read(staged.memory);
    const draft = createHash('sha256');
    for (const text of [checkpoint, memory, ...[...spillovers.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).flat()]) draft.update(text ?? '\u0000').update('\u0001');
    const violations = validateMemoryFiles({
      checkpointPath: staged.checkpoint,
      checkpoint,
      memoryPath: staged.memory,
      memory,
      previousMemory: await read(this.live.memory),
      template: loadPrompt('checkpoint-template'),
      memoryTemplate: loadPrompt('memory-template'),
      userRequestExists,
      spilloverExists: (name) => (spillovers.get(name) ?? null) !== null,
      readSpillover: (name) => spillovers.get(name) ?? null,
      budgets: this.#o.budgets,
    });
    const decision = decideValidation(violations);
    const pick = (severity: Violation['severity']): string[] => violations.filter((v) => v.severity === severity).map(describe);
    return { errors: pick('error'), extract: pick('extract-required'), warnings: decision.warnings.map(describe), violations, draftHash: draft.digest('hex') };
  }

  /**
   * Commits the staged changes to the live tree; returns the committed files (live paths and hashes) and the files
   * left alone because they changed live since they were staged.
   */
  async commit(): Promise<{ files: { path: string; hash: string }[]; conflicts: string[] }> {
    const { changes, conflicts } = await stagedChanges(this.staged, this.live, this.#base);
    const committed: { rel: string; hash: string }[] = [];
    const shared = this.#o.shared;
    if (shared !== undefined) {
      // The project's files go to the cluster first: nothing is committed when it cannot be reached.
      const projectPrefix = relative(this.live.root, this.live.projectDir) + sep;
      const files = [...changes].filter(([rel]) => rel.startsWith(projectPrefix)).map(([rel, data]) => ({ rel, base: this.#sharedBase[rel] ?? 0, data }));
      if (files.length > 0) {
        const result = await shared.commit({ projectId: this.#o.ids.projectId, writerId: this.#o.writerId, at: this.#o.clock(), files });
        committed.push(...result.files);
        conflicts.push(...result.conflicts);
        for (const f of files) changes.delete(f.rel);
      }
    }
    if (changes.size > 0) {
      const record = await commitFiles(
        {
          memoryRoot: this.#o.memoryRoot,
          history: this.#o.history,
          journal: this.#o.journal,
          commitId: this.#o.writerId,
          writerId: this.#o.writerId,
          reason: 'writer',
          at: this.#o.clock(),
        },
        changes,
      );
      committed.push(...record.files);
    }
    return { files: committed.map((f) => ({ path: join(this.#o.memoryRoot, f.rel), hash: f.hash })), conflicts };
  }

  /** Keeps the rejected draft beside the live checkpoint for post-mortem; the live checkpoint is not touched. */
  async quarantine(): Promise<string | null> {
    const exists = await stat(this.staged.checkpoint).then(() => true, () => false);
    if (!exists) return null;
    await mkdir(this.live.sessionDir, { recursive: true });
    await copyFile(this.staged.checkpoint, this.live.invalidCheckpoint);
    return this.live.invalidCheckpoint;
  }

  async discard(): Promise<void> {
    await discardStaging(this.#o.stagingRoot);
  }
}
