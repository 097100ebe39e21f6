import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runBaton } from './helpers/run-baton.ts';

/*
 * Protects `baton demo` as a new user meets it: one command, nothing else running, and a story that ends with a
 * checkpoint and a replay command that works.
 */

const dataDir = mkdtempSync(join(tmpdir(), 'baton-demo-'));

afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

describe('baton demo', () => {
  it('replays the recorded session to a checkpoint and prints a replay command that verifies', { timeout: 120_000 }, async () => {
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

    const sid = /^Session id: (\S+)$/m.exec(out)?.[1] as string;
    expect(out).toContain(`npx baton replay ${sid} --data-dir ${dataDir}\n`);
    expect(out).toContain(`npx baton replay ${sid} --data-dir ${dataDir} --verify\n`);

    const verify = await runBaton(['replay', sid, '--data-dir', dataDir, '--verify']);
    expect(verify.code).toBe(0);
    expect(verify.stdout).toMatch(/verified \d+ session events, \d+ decisions, [1-9]\d* writers?: no divergence/);
  });
});
