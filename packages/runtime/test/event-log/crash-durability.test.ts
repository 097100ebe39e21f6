/**
 * Crash durability: a child process appends and prints every acknowledged record; the parent SIGKILLs it mid-stream.
 * After reopening, every acknowledged record must be there, unchanged, with per-stream seqs contiguous from 1.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { LmdbEventLog } from '../../src/event-log/lmdb-event-log.ts';
import { makeTempDir, removeDir } from './temp-dir.ts';

const CHILD = fileURLToPath(new URL('./fixtures/append-child.ts', import.meta.url));
const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

interface Ack {
  readonly stream: string;
  readonly seq: number;
  readonly msgId: string;
  readonly i: number;
  readonly k: number;
}

/** Runs the child until `minAcks` acknowledgements arrived, SIGKILLs it, returns the acknowledgements. */
function runAndKill(dir: string, minAcks: number): Promise<Ack[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--conditions=@baton/source', '--import', 'tsx', CHILD, dir, '8'], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const acks: Ack[] = [];
    let buffered = '';
    let stderr = '';
    let killed = false;
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        if (line === 'ready') continue;
        const [stream, seq, msgId, i, k] = line.split(' ');
        acks.push({ stream: stream as string, seq: Number(seq), msgId: msgId as string, i: Number(i), k: Number(k) });
      }
      if (!killed && acks.length >= minAcks) {
        killed = true;
        child.kill('SIGKILL');
      }
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (signal !== 'SIGKILL') reject(new Error(`child exited early (code ${code}, signal ${signal}): ${stderr}`));
      else resolve(acks); // a partial line after the kill is not an acknowledgement
    });
  });
}

it('keeps every acknowledged append across SIGKILL, and the log stays appendable', async () => {
  const dir = makeTempDir('baton-evlog-crash-');
  try {
    for (const round of [1, 2]) {
      const before = round === 1 ? new Map<string, number>() : await lastSeqs(dir);
      const acks = await runAndKill(dir, 1500);
      expect(acks.length).toBeGreaterThanOrEqual(1500);

      const log = LmdbEventLog.open({ path: dir });
      try {
        for (const ack of acks) {
          const [record] = [...log.read(ack.stream, { from: ack.seq, to: ack.seq })];
          expect(record, `${ack.stream}#${ack.seq}`).toBeDefined();
          expect(record?.payload).toMatchObject({ i: ack.i, k: ack.k });
          if (ack.msgId !== '-') expect(record?.msgId).toBe(ack.msgId);
        }
        for (const stream of log.streams('crash.')) {
          const seqs = [...log.read(stream)].map((r) => r.seq);
          expect(seqs).toEqual(seqs.map((_, i) => i + 1));
          expect(log.lastSeq(stream)).toBe(seqs.length);
          expect(seqs.length).toBeGreaterThanOrEqual(before.get(stream) ?? 0);
        }
        // after recovery the log accepts appends and keeps numbering
        const stream = acks[0]?.stream as string;
        const last = log.lastSeq(stream);
        expect(await log.append(stream, [{ type: 'after', at: 0, payload: round }])).toEqual([{ seq: last + 1, duplicate: false }]);
      } finally {
        await log.close();
      }
    }
  } finally {
    removeDir(dir);
  }
}, 60_000);

async function lastSeqs(dir: string): Promise<Map<string, number>> {
  const log = LmdbEventLog.open({ path: dir });
  try {
    return new Map([...log.streams()].map((s) => [s, log.lastSeq(s)]));
  } finally {
    await log.close();
  }
}
