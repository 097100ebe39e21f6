import { renderPrompt } from '../templates/prompt-registry.ts';

/**
 * The checkpoint index block of the rebuilt context: where the session's memory
 * directory is and how to read the full checkpoint, or a one-line note that there is no checkpoint yet. A
 * self-contained context (read on another machine than the memory files) names no path: it says the copy below is
 * all its reader has.
 *
 * @param sessionDir absolute session memory directory (`<root>/sessions/<sid>`), shown with a trailing `/`.
 * @param checkpointPath absolute path of checkpoint.md.
 * @param exists whether checkpoint.md exists; when false the block is "No checkpoints yet for this session."
 * @param selfContained whether the paths are left out (default false).
 */
export function renderCheckpointIndex(sessionDir: string, checkpointPath: string, exists: boolean, selfContained = false): string {
  if (!exists) return renderPrompt('rebuild-index-empty', {}).trimEnd();
  if (selfContained) return renderPrompt('rebuild-index-inline', {}).trimEnd();
  return renderPrompt('rebuild-index', {
    SESSION_DIR: sessionDir.replace(/[\\/]+$/, ''),
    CHECKPOINT_PATH: checkpointPath,
  }).trimEnd();
}
