import { readFile, stat } from 'node:fs/promises';
import { relative } from 'node:path';
import { fileVersions, countTokensOnce } from '@baton/memory-store';
import type { CommitRecordSchemas, StreamLog } from '@baton/log-schema';
import type { MemoryFileInfo } from '@baton/protocol';
import { EventLogCommitJournal } from '../memory/event-log-commit-journal.ts';

/** What `status` reports of one memory file: existence, real-token size and number of committed versions. */
export async function memoryFileInfo(memoryRoot: string, path: string, commits: StreamLog<CommitRecordSchemas>): Promise<MemoryFileInfo> {
  const exists = await stat(path).then(
    (s) => s.isFile(),
    () => false,
  );
  const tokens = exists ? countTokensOnce(await readFile(path, 'utf8')) : 0;
  // The number of committed versions of the file (`baton memory log` lists them).
  const version = (await fileVersions(new EventLogCommitJournal(commits.log), relative(memoryRoot, path))).length;
  return { exists, tokens, version };
}
