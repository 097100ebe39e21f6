import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../src/main.ts';
import { captureIo } from './helpers/capture-io.ts';
import { runBaton } from './helpers/run-baton.ts';

/*
 * Protects `baton demo` as a new user meets it: one command, nothing else running, and a story that crosses the
 * usable window, rebuilds and goes on, and ends with a checkpoint, its committed versions and a replay command that
 * works.
 */

const dataDir = mkdtempSync(join(tmpdir(), 'baton-demo-'));

afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

describe('baton demo', () => {
  it('replays the recorded session through an overflow and a rebuild to a checkpoint, and prints a replay command that verifies', { timeout: 120_000 }, async () => {
    const run = await runBaton(['demo', '--data-dir', dataDir, '--pool-size', '1']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const out = run.stdout;
    expect(out).toContain('tail policy scaled down');
    expect(out).toMatch(/⟶ threshold [\d ]+ crossed at [\d ]+ tokens/);
    expect(out).toMatch(/✎ writer …-w1 started \(fork mode, covers up to m\d+/);
    expect(out).toMatch(/✓ writer …-w\d+ settled: success, watermark m\d+, \d+ LLM calls?, cache hit \d+%/);

    const checkpoint = /^Checkpoint: (.+)$/m.exec(out)?.[1];
    expect(checkpoint).toBeDefined();
    expect(existsSync(checkpoint as string)).toBe(true);
    expect(readFileSync(checkpoint as string, 'utf8')).toContain('## §1 Active intent');
    expect(out).toMatch(/§1 Active intent:\n {2}│ \S/);

    // The recording crosses the usable window before its end: the demo rebuilds and goes on from the new context.
    expect(out).toMatch(/^⚠ overflow: [\d ]+ tokens, past the usable window of 48 000/m);
    expect(out).toMatch(/^⟲ rebuild: rebuilt, covered up to m\d+ — \S/m);
    expect(out).toMatch(/^ {2}new context: \d+ messages, boundary message [\d ]+ tokens in \d+ sections:$/m);
    expect(out).toMatch(/^ {2}│ ## Session checkpoint +[\d ]+ tokens$/m);
    expect(out).toMatch(/^ {2}│ ## Recent user input \(verbatim\) +[\d ]+ tokens$/m);
    expect(out).toMatch(/^ {2}the agent's history is now the rebuilt context: \d+ → \d+ messages/m);
    const rebuildAt = out.indexOf('⟲ rebuild: rebuilt');
    const tokensOf = (id: string): number => Number(new RegExp(`^ {2}· ${id} .*\\[([\\d ]+) tokens\\]$`, 'm').exec(out)?.[1]?.replaceAll(' ', ''));
    expect(out.indexOf('· m082 ')).toBeLessThan(rebuildAt);
    expect(out.indexOf('· m090 ')).toBeGreaterThan(rebuildAt);
    expect(tokensOf('m082')).toBeGreaterThan(48_000);
    expect(tokensOf('m090')).toBeGreaterThan(0);
    expect(tokensOf('m090')).toBeLessThan(48_000);
    expect(out).toMatch(/^Done in [\d.]+ s: \d+ threshold crossings, \d+ writers settled \(\d+ successful\), 1 rebuild\.$/m);

    const sid = /^Session id: (\S+)$/m.exec(out)?.[1] as string;
    expect(out).toContain(`npx baton replay ${sid} --data-dir ${dataDir}\n`);
    expect(out).toContain(`npx baton replay ${sid} --data-dir ${dataDir} --verify\n`);
    expect(out).toContain(`npx baton memory log ${sid} --data-dir ${dataDir}\n`);

    // Every successful writer committed a version of the checkpoint; the live file is the newest.
    const io = captureIo();
    expect(await main(['node', 'baton', 'memory', 'log', sid, '--data-dir', dataDir], io, {})).toBe(0);
    expect(io.stderr).toEqual([]);
    expect(io.stdout.at(-1)).toMatch(/^ {2}v\d+ .* …-w\d+ .* bytes {2}← live$/);
    expect(io.stdout.length).toBeGreaterThan(2);

    const verify = await runBaton(['replay', sid, '--data-dir', dataDir, '--verify']);
    expect(verify.code).toBe(0);
    expect(verify.stdout).toMatch(/verified \d+ session events, \d+ decisions(, \d+ snapshots?)?, [1-9]\d* writers?: no divergence/);
  });
});
