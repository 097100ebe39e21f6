import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { EXIT, exitCodesHelp } from '../src/exit-codes.ts';
import { buildProgram, main } from '../src/main.ts';
import { captureIo } from './helpers/capture-io.ts';

/** One exit-code table: every command's help takes its numbers from it, and the README documents it as it is. */

const README = join(import.meta.dirname, '..', '..', '..', 'README.md');

/** The paths of the commands that run something (`memory log`, not `memory`). */
function leafCommands(command: Command, path: string[] = []): string[][] {
  if (command.commands.length === 0) return [path];
  return command.commands.flatMap((c) => leafCommands(c, [...path, c.name()]));
}

describe('the exit-code table', () => {
  it('writes a help line from the table, the codes a command has in order', () => {
    expect(exitCodesHelp({ ok: 'ok', failed: 'divergence', notFound: 'unknown session or no event log' })).toBe('\nExit codes: 0 ok; 1 divergence; 2 unknown session or no event log.');
    expect(exitCodesHelp({ notServing: 'not serving yet', ok: 'ok' })).toBe('\nExit codes: 0 ok; 3 not serving yet.');
  });

  it("gives every command's --help an exit-code line whose codes are the table's", async () => {
    const paths = leafCommands(buildProgram(captureIo(), {}, () => {}));
    expect(paths.length).toBeGreaterThan(10);
    const codes = new Set<number>(Object.values(EXIT));
    for (const path of paths) {
      const io = captureIo();
      expect(await main(['node', 'baton', ...path, '--help'], io, {}), path.join(' ')).toBe(EXIT.ok);
      const line = io.stdout.join('\n').split('\n').find((l) => l.startsWith('Exit codes: '));
      expect(line, path.join(' ')).toBeDefined();
      const given = [...(line ?? '').matchAll(/(?:: |; )(\d) /g)].map((m) => Number(m[1]));
      expect(given[0], path.join(' ')).toBe(EXIT.ok);
      expect(given.filter((c) => !codes.has(c)), path.join(' ')).toEqual([]);
    }
  });

  it('exits failed on a flag value the command refuses, from every command', async () => {
    for (const args of [['status', '--timeout', 'soon'], ['daemon', '--pool-size', '0'], ['replay', 's1', '--nope'], ['memory', 'log']]) {
      const io = captureIo();
      expect(await main(['node', 'baton', ...args], io, {}), args.join(' ')).toBe(EXIT.failed);
      expect(io.stderr.join('\n'), args.join(' ')).toMatch(/^error: /);
    }
  });

  it('is the table the README documents', () => {
    const lines = readFileSync(README, 'utf8').split('\n');
    const header = lines.indexOf('| code | meaning |');
    expect(header).toBeGreaterThan(0);
    const rows: number[] = [];
    for (const line of lines.slice(header + 2)) {
      if (!line.startsWith('|')) break;
      rows.push(Number(/^\| (\d+) \|/.exec(line)?.[1]));
    }
    expect(rows).toEqual(Object.values(EXIT));
  });
});
