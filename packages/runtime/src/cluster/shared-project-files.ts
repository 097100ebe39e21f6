import { readFile } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { commitFiles, contentHash, type CommitJournal, type HistoryStore } from '@baton/memory-store';
import type { SharedCommitRequest, SharedCommitResult, SharedFilesPort } from '../memory/shared-files-port.ts';
import { ClusterError } from './cluster-error.ts';
import { checkFileStem, checkProjectId } from './cluster-names.ts';
import type { SharedFileVersions, SharedVersion } from './shared-file-versions.ts';

export interface SharedProjectFilesOptions {
  readonly versions: SharedFileVersions;
  readonly daemonId: string;
  /** The live memory tree, its history store and commit journal: every version written here is committed locally. */
  readonly memoryRoot: string;
  readonly history: HistoryStore;
  readonly journal: CommitJournal;
  /**
   * Told when a live copy this process had not written is replaced by the cluster's newest version (the first time the
   * file is seen after start-up: a stale copy, or one the cluster never had, such as a restore made while the daemon was
   * stopped). The replaced content stays in the local history store when it was committed here.
   */
  readonly onReplaced?: (info: { projectId: string; rel: string; version: number; replacedHash: string }) => void;
}

/** `projects/<project>/<stem>.md` relative to the memory root. */
export function sharedRel(projectId: string, stem: string): string {
  return join('projects', projectId, `${stem}.md`);
}

function parseRel(projectId: string, rel: string): string {
  const prefix = `projects${sep}${projectId}${sep}`;
  if (!rel.startsWith(prefix) || !rel.endsWith('.md')) throw new ClusterError('config', `${rel} is not a file of project ${projectId}`, { projectId, rel });
  return checkFileStem(rel.slice(prefix.length, -'.md'.length));
}

/**
 * The project memory files (`MEMORY.md` and its spillovers) shared by every daemon of a cluster: versions live in the
 * cluster's KV bucket (`SharedFileVersions`), and each daemon keeps a live copy in its memory tree, written only here,
 * one project at a time and only ever forwards — the newest version before a writer stages, each version as it is
 * committed or (`follow`) as another daemon creates it. A commit is accepted only when its base is still the newest
 * version (the next version's key is created once), so a writer on another daemon never overwrites an update it did
 * not see: that file is reported as a conflict and left as it was, as within one daemon.
 */
export class SharedProjectFiles implements SharedFilesPort {
  readonly #o: SharedProjectFilesOptions;
  /** The version of each `<project>/<stem>` this daemon's live copy holds (known since this process started). */
  readonly #applied = new Map<string, number>();
  readonly #chains = new Map<string, Promise<unknown>>();

  constructor(options: SharedProjectFilesOptions) {
    this.#o = options;
  }

  /** Runs `job` after every earlier job of the project (the live copies of a project change in one place at a time). */
  #locked<T>(projectId: string, job: () => Promise<T>): Promise<T> {
    const run = (this.#chains.get(projectId) ?? Promise.resolve()).then(job);
    const tail = run.catch(() => {});
    this.#chains.set(projectId, tail);
    void tail.then(() => {
      if (this.#chains.get(projectId) === tail) this.#chains.delete(projectId);
    });
    return run;
  }

  async sync(projectId: string): Promise<Readonly<Record<string, number>>> {
    checkProjectId(projectId);
    return await this.#locked(projectId, async () => {
      const out: Record<string, number> = {};
      for (const stem of await this.#o.versions.stems(projectId)) {
        const version = await this.#bring(projectId, stem);
        if (version > 0) out[sharedRel(projectId, stem)] = version;
      }
      return out;
    });
  }

  /** Brings one file's live copy up to the newest shared version (another daemon created it). */
  refresh(projectId: string, stem: string): Promise<number> {
    return this.#locked(projectId, () => this.#bring(projectId, stem));
  }

  async commit(request: SharedCommitRequest): Promise<SharedCommitResult> {
    const { projectId } = request;
    checkProjectId(projectId);
    const stems = request.files.map((f) => parseRel(projectId, f.rel));
    return await this.#locked(projectId, async () => {
      const created: { rel: string; stem: string; version: number; data: Uint8Array }[] = [];
      const conflicts: string[] = [];
      for (const [i, file] of request.files.entries()) {
        const stem = stems[i] as string;
        const newest = await this.#bring(projectId, stem);
        const version = file.base + 1;
        const value = { hash: contentHash(file.data), data: file.data, writerId: request.writerId, reason: 'writer' as const, daemonId: this.#o.daemonId, at: request.at };
        if (newest !== file.base || !(await this.#o.versions.create(projectId, stem, version, value))) {
          // Another commit was first: this daemon's copy catches up with it; the writer's edit is not applied.
          await this.#bring(projectId, stem);
          conflicts.push(file.rel);
          continue;
        }
        created.push({ rel: file.rel, stem, version, data: file.data });
      }
      if (created.length === 0) return { files: [], conflicts };
      const record = await commitFiles(
        { ...this.#local(), commitId: `${request.writerId}-project`, writerId: request.writerId, reason: 'writer', at: request.at },
        new Map(created.map((c) => [c.rel, c.data])),
      );
      for (const c of created) this.#applied.set(`${projectId}/${c.stem}`, c.version);
      return { files: record.files.map((f) => ({ rel: f.rel, hash: f.hash })), conflicts };
    });
  }

  #local(): { memoryRoot: string; history: HistoryStore; journal: CommitJournal } {
    return { memoryRoot: this.#o.memoryRoot, history: this.#o.history, journal: this.#o.journal };
  }

  /** Writes the newest shared version of a file to the live copy when it is newer than what it holds; its version. */
  async #bring(projectId: string, stem: string): Promise<number> {
    const key = `${projectId}/${stem}`;
    const known = this.#applied.get(key) ?? 0;
    const newest = await this.#o.versions.newest(projectId, stem, known);
    if (newest === null || newest.version <= known) return known;
    await this.#write(projectId, stem, newest, known === 0);
    this.#applied.set(key, newest.version);
    return newest.version;
  }

  async #write(projectId: string, stem: string, v: SharedVersion, firstSeen: boolean): Promise<void> {
    const rel = sharedRel(projectId, stem);
    const live = await readFile(join(this.#o.memoryRoot, rel)).then((b) => contentHash(b), () => null);
    if (live === v.hash) return;
    if (firstSeen && live !== null) this.#o.onReplaced?.({ projectId, rel, version: v.version, replacedHash: live });
    await commitFiles(
      { ...this.#local(), commitId: `shared-${projectId}-${stem}-v${v.version}`, writerId: v.writerId, reason: v.reason, at: v.at },
      new Map([[rel, v.data]]),
    );
  }
}
