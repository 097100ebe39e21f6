import { isAbsolute, posix, relative, sep } from 'node:path';
import { MEMORY_ID_PATTERN } from '@baton/memory-store';

/** Why a `baton memory` command stopped: a file or version that does not exist (exit 2), or a refusal (exit 1). */
export class MemoryCommandError extends Error {
  readonly kind: 'not_found' | 'refused';

  constructor(kind: 'not_found' | 'refused', message: string) {
    super(message);
    this.name = 'MemoryCommandError';
    this.kind = kind;
  }
}

const PROJECT_PREFIX = 'project:';

/**
 * The memory file a `<scope>` argument names, relative to the memory root (`<data>/memory`):
 * - a session id → `sessions/<sid>/checkpoint.md`;
 * - `project:<pid>` → `projects/<pid>/MEMORY.md`;
 * - a path relative to the memory root (anything with a `/` or ending in `.md`, e.g. a spillover file), or an
 *   absolute path inside it.
 *
 * @throws MemoryCommandError `not_found` when the scope is none of these or points outside the memory root.
 */
export function scopePath(scope: string, memoryRoot: string): string {
  if (scope.startsWith(PROJECT_PREFIX)) {
    const projectId = scope.slice(PROJECT_PREFIX.length);
    if (!MEMORY_ID_PATTERN.test(projectId)) throw new MemoryCommandError('not_found', `${JSON.stringify(projectId)} is not a project id`);
    return `projects/${projectId}/MEMORY.md`;
  }
  const looksLikePath = scope.includes('/') || scope.includes(sep) || scope.endsWith('.md');
  if (!looksLikePath) {
    if (!MEMORY_ID_PATTERN.test(scope)) {
      throw new MemoryCommandError('not_found', `${JSON.stringify(scope)} is neither a session id, project:<id> nor a path relative to the memory root`);
    }
    return `sessions/${scope}/checkpoint.md`;
  }
  const rel = isAbsolute(scope) ? relative(memoryRoot, scope).split(sep).join('/') : scope.split(sep).join('/');
  const clean = posix.normalize(rel);
  if (clean === '.' || clean === '..' || clean.startsWith('../') || posix.isAbsolute(clean) || clean.includes('\0')) {
    throw new MemoryCommandError('not_found', `${scope} is not inside the memory root ${memoryRoot}`);
  }
  return clean;
}
