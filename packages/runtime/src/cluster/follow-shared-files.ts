import type { KV } from '@nats-io/kv';
import type { ClusterNames } from './cluster-names.ts';
import { withRetry } from './retry.ts';
import type { SharedProjectFiles } from './shared-project-files.ts';

/** A running watch of the shared files' head hints; `stop` ends it. */
export interface SharedFilesFollower {
  stop(): void;
}

/**
 * Keeps this daemon's live copies of every project's shared memory files current: watches the head hints (each
 * version's creator moves its file's hint) and brings the file named by each change up to its newest version — so a
 * rebuild here shows project memory another daemon's writer committed. The watch starts with every hint there is, so
 * joining brings every project up to date. Writers do not depend on it: they sync before staging.
 */
export async function followSharedFiles(kv: KV, names: ClusterNames, files: SharedProjectFiles, onError: (err: unknown) => void): Promise<SharedFilesFollower> {
  const watch = await withRetry(`watch ${names.allMemoryHeads}`, () => kv.watch({ key: names.allMemoryHeads }));
  let stopped = false;
  void (async () => {
    try {
      for await (const e of watch) {
        if (e.operation !== 'PUT') continue;
        const named = names.memoryHeadOf(e.key);
        if (named !== null) files.refresh(named.projectId, named.stem).catch(onError);
      }
    } catch (err) {
      if (!stopped) onError(err);
    }
  })();
  return {
    stop: () => {
      stopped = true;
      watch.stop();
    },
  };
}
