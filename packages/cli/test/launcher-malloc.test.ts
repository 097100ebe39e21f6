import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { MALLOC_TUNABLES } from '../src/daemon/malloc-tunables.ts';

const BIN = fileURLToPath(new URL('../bin/baton.js', import.meta.url));

// A `node` first on PATH that prints what it was started with: the launcher's shell line execs `node` from PATH.
const fakeDir = mkdtempSync(join(tmpdir(), 'baton-launcher-'));
writeFileSync(join(fakeDir, 'node'), '#!/bin/sh\nprintf "%s\\n" "GLIBC_TUNABLES=${GLIBC_TUNABLES-<unset>}" "$@"\n');
chmodSync(join(fakeDir, 'node'), 0o755);
afterAll(() => rmSync(fakeDir, { recursive: true, force: true }));

function launch(env: Record<string, string | undefined>, args: string[]): string[] {
  const base: Record<string, string | undefined> = { ...process.env, PATH: `${fakeDir}:${process.env.PATH ?? ''}` };
  delete base.GLIBC_TUNABLES;
  return execFileSync(BIN, args, { env: { ...base, ...env }, encoding: 'utf8' }).trimEnd().split('\n');
}

describe('the baton launcher', () => {
  it('starts node on itself with the allocator settings, its arguments intact', () => {
    expect(launch({}, ['daemon', '--pool-size', '2 3', '$HOME "x"'])).toEqual([`GLIBC_TUNABLES=${MALLOC_TUNABLES}`, BIN, 'daemon', '--pool-size', '2 3', '$HOME "x"']);
  });

  it('leaves GLIBC_TUNABLES alone when it is set, even empty', () => {
    expect(launch({ GLIBC_TUNABLES: 'glibc.malloc.arena_max=4' }, ['status'])[0]).toBe('GLIBC_TUNABLES=glibc.malloc.arena_max=4');
    expect(launch({ GLIBC_TUNABLES: '' }, ['status'])[0]).toBe('GLIBC_TUNABLES=');
  });

  it('is still plain JavaScript for node: the shell line is a string and a comment', () => {
    const [shebang, shellLine] = readFileSync(BIN, 'utf8').split('\n');
    expect(shebang).toBe('#!/bin/sh');
    expect(shellLine?.startsWith("':' //;")).toBe(true);
    const help = execFileSync(process.execPath, [BIN, '--help'], { encoding: 'utf8' });
    expect(help).toContain('Usage: baton');
  });
});
