import type { Lineage, LineageKind } from '@baton/protocol';

/** `baton replay`'s lines on a session's lineage: the session it continues, and those that continue it. */
export function lineageLines(from: Lineage | undefined, successors: readonly { session_id: string; kind: LineageKind }[]): string[] {
  const lines: string[] = [];
  if (from !== undefined) {
    const checkpoint = from.checkpoint_version === null ? 'no checkpoint' : `checkpoint v${from.checkpoint_version}, watermark ${from.watermark ?? '–'}`;
    lines.push(`continues ${from.from_session} (${from.kind}, from ${checkpoint})`);
  }
  if (successors.length > 0) lines.push(`continued by ${successors.map((s) => `${s.session_id} (${s.kind})`).join(', ')}`);
  return lines;
}
