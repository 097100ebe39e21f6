import { relative } from 'node:path';
import type { LastOutcome, MemoryPaths, StatusReply } from '@baton/protocol';
import type { SessionStatusInfo } from '../host/worker-messages.ts';
import type { CommitVersions } from './commit-versions.ts';
import type { LoadedSession } from './loaded-session.ts';
import { stateOf } from './state-of.ts';

/**
 * A session's `status` answer: its state (from its actor's summary), its memory files (existence and tokens as the
 * worker read them, versions from the commit journal), its running writer and how the last writer settled.
 */
export function statusReplyOf(session: LoadedSession, info: SessionStatusInfo, paths: MemoryPaths, versions: CommitVersions): Omit<StatusReply, 'ok'> {
  const version = (path: string): number => versions.versions(relative(paths.root, path));
  const last = session.summary.lastOutcome;
  const lastOutcome: LastOutcome | null =
    last === null
      ? null
      : {
          writer_id: last.writerId,
          outcome: last.outcome,
          ...(last.failure !== null ? { failure: { kind: last.failure.kind, retryable: last.failure.retryable } } : {}),
          watermark: session.summary.watermark,
          at: info.lastSettledAt ?? 0,
        };
  return {
    state: stateOf(session.summary),
    files: {
      checkpoint: { ...info.files.checkpoint, version: version(paths.checkpoint) },
      memory: { ...info.files.memory, version: version(paths.memory) },
      notes: { ...info.files.notes, version: version(paths.notes) },
    },
    writer: info.writer,
    last_outcome: lastOutcome,
  };
}
