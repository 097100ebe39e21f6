import { fileVersions, type FileVersion } from '@baton/memory-store';
import { diffLines } from 'diff';
import type { InspectorData } from './inspector-data.ts';
import { InspectorError } from './inspector-error.ts';

/** One committed version of a session's checkpoint.md. */
export interface CheckpointVersionView {
  readonly version: number;
  readonly at: number;
  readonly hash: string;
  /** The writer that committed it; null for a restore. */
  readonly writerId: string | null;
  readonly reason: string;
  readonly bytes: number;
}

/** One line of a version's diff against the version before it. */
export interface DiffLine {
  readonly kind: 'added' | 'removed' | 'same';
  readonly text: string;
}

/** A version's text and its line diff against the previous version (against nothing for the first). */
export interface CheckpointDiffView extends CheckpointVersionView {
  readonly previous: number | null;
  readonly content: string;
  readonly added: number;
  readonly removed: number;
  readonly lines: readonly DiffLine[];
}

/** Where a session's checkpoint lives, relative to the memory root (what commits record). */
export function checkpointRel(sessionId: string): string {
  return `sessions/${sessionId}/checkpoint.md`;
}

async function contentOf(data: InspectorData, v: FileVersion): Promise<string> {
  try {
    return (await data.history.get(v.hash)).toString('utf8');
  } catch {
    throw new InspectorError(404, `the content of checkpoint v${v.version} (${v.hash}) is missing from ${data.history.dir}`);
  }
}

/** Every committed version of the session's checkpoint, oldest first (none when no writer committed yet). */
export async function checkpointVersions(data: InspectorData, sessionId: string): Promise<CheckpointVersionView[]> {
  const out: CheckpointVersionView[] = [];
  for (const v of await fileVersions(data.journal, checkpointRel(sessionId))) {
    out.push({ version: v.version, at: v.at, hash: v.hash, writerId: v.writerId, reason: v.reason, bytes: Buffer.byteLength(await contentOf(data, v)) });
  }
  return out;
}

/** The lines of `before` → `after`, each marked added, removed or the same. */
export function lineDiff(before: string, after: string): DiffLine[] {
  const lines: DiffLine[] = [];
  for (const change of diffLines(before, after)) {
    const kind = change.added ? 'added' : change.removed ? 'removed' : 'same';
    const parts = change.value.split('\n');
    if (parts.at(-1) === '') parts.pop();
    for (const text of parts) lines.push({ kind, text });
  }
  return lines;
}

/**
 * Version `version` of the session's checkpoint with its diff against the version before it.
 *
 * @throws InspectorError 404 when the checkpoint has no such version.
 */
export async function checkpointDiff(data: InspectorData, sessionId: string, version: number): Promise<CheckpointDiffView> {
  const versions = await fileVersions(data.journal, checkpointRel(sessionId));
  const v = versions.find((x) => x.version === version);
  if (v === undefined) {
    const known = versions.length === 0 ? 'it has none yet' : `versions 1–${versions.length}`;
    throw new InspectorError(404, `session ${sessionId}'s checkpoint has no version ${version} (${known})`);
  }
  const prev = versions.find((x) => x.version === version - 1);
  const content = await contentOf(data, v);
  const lines = lineDiff(prev === undefined ? '' : await contentOf(data, prev), content);
  return {
    version: v.version,
    at: v.at,
    hash: v.hash,
    writerId: v.writerId,
    reason: v.reason,
    bytes: Buffer.byteLength(content),
    previous: prev?.version ?? null,
    content,
    added: lines.filter((l) => l.kind === 'added').length,
    removed: lines.filter((l) => l.kind === 'removed').length,
    lines,
  };
}
