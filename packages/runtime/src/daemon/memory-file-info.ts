import { readFile, stat } from 'node:fs/promises';
import { relative } from 'node:path';
import { fileVersions, type CommitJournal } from '@baton/memory-store';
import { countTokens } from 'gpt-tokenizer';

/** What `status` reports of one memory file: existence, real-token size and number of committed versions. */
export async function memoryFileInfo(memoryRoot: string, path: string, journal: CommitJournal): Promise<{ exists: boolean; tokens: number; version: number }> {
  const exists = await stat(path).then(
    (s) => s.isFile(),
    () => false,
  );
  const tokens = exists ? countTokens(await readFile(path, 'utf8')) : 0;
  // The number of committed versions of the file (`baton memory log` lists them).
  const version = (await fileVersions(journal, relative(memoryRoot, path))).length;
  return { exists, tokens, version };
}
