import type { AppendInput } from '@baton/log-schema';
import { describe, expect, it } from 'vitest';
import { sessionOfAppend } from '../../src/cluster/replicated-event-log.ts';

/*
 * Which session's replicated log a local append also goes to: a memory commit goes with the session whose writer made
 * it, or, made by no writer, with the one session whose own files it holds (the checkpoint a slice inherited), so a
 * daemon that takes the session over writes those files too.
 */

const commit = (writerId: string | null, rels: string[]): AppendInput[] => [
  { type: 'commit.applied', at: 1, payload: { commitId: 'c', writerId, reason: writerId === null ? 'inherited' : 'writer', at: 1, files: rels.map((rel) => ({ rel, hash: 'h' })) } },
];

describe('sessionOfAppend', () => {
  it('attributes streams and commits to their session', () => {
    expect(sessionOfAppend('session/s1', [])).toBe('s1');
    expect(sessionOfAppend('writer/s1-w3', [])).toBe('s1');
    expect(sessionOfAppend('memory/commits', commit('s1-w3', ['projects/p/MEMORY.md']))).toBe('s1');
    expect(sessionOfAppend('memory/commits', commit(null, ['sessions/s1-s1/checkpoint.md', 'sessions/s1-s1/checkpoint-api.md']))).toBe('s1-s1');
  });

  it('leaves a commit of no writer that is not one session\'s own files, and other streams, to the local log', () => {
    expect(sessionOfAppend('memory/commits', commit(null, ['projects/p/MEMORY.md']))).toBeNull();
    expect(sessionOfAppend('memory/commits', commit(null, ['sessions/a/checkpoint.md', 'sessions/b/checkpoint.md']))).toBeNull();
    expect(sessionOfAppend('memory/commits', commit(null, []))).toBeNull();
    expect(sessionOfAppend('memory/blobs', [])).toBeNull();
  });
});
