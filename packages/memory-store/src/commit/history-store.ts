import { createHash } from 'node:crypto';
import { mkdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';
import { writeFileAtomic } from './atomic-file.ts';
import { MemoryStoreError } from '../memory-errors.ts';

/** sha256 of the bytes, hex. */
export function contentHash(data: Uint8Array | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/**
 * Content-addressed store of every committed version of a memory file (`<dir>/<aa>/<sha256>`). Writing is
 * idempotent and durable before it returns, so a commit journal may refer to a hash as soon as `put` resolved.
 */
// Temp names must be unique across concurrent puts of the same content (several writers, several threads).
let puts = 0;

export class HistoryStore {
  readonly dir: string;

  constructor(dir: string) {
    this.dir = dir;
  }

  #path(hash: string): string {
    if (!/^[0-9a-f]{64}$/.test(hash)) throw new MemoryStoreError('invalid_argument', `not a content hash: ${hash}`);
    return join(this.dir, hash.slice(0, 2), hash);
  }

  async put(data: Uint8Array | string): Promise<string> {
    const hash = contentHash(data);
    const path = this.#path(hash);
    const exists = await stat(path).then(
      (s) => s.isFile(),
      () => false,
    );
    if (!exists) {
      await mkdir(join(this.dir, hash.slice(0, 2)), { recursive: true });
      await writeFileAtomic(path, data, `put-${process.pid}-${threadId}-${++puts}`);
    }
    return hash;
  }

  /** @throws MemoryStoreError `not_found` when no version has that hash. */
  async get(hash: string): Promise<Buffer> {
    try {
      return await readFile(this.#path(hash));
    } catch {
      throw new MemoryStoreError('not_found', `no stored version ${hash}`);
    }
  }

  async has(hash: string): Promise<boolean> {
    return await stat(this.#path(hash)).then(
      () => true,
      () => false,
    );
  }
}
