#!/usr/bin/env node
// Same-run comparison of one bench section between this checkout and an earlier commit:
//
//   node scripts/bench-compare.mjs --base <rev> [--only gateway] [--runs 3] [--keep]
//
// The earlier commit is checked out into a temporary git worktree, installed (`npm ci`) and built there. Then the
// section runs alternately in the two trees, the order flipped each round (head, base | base, head | …), so both see
// the same machine state. Every row of the section is read from the printed table; the report gives each row's
// median over the rounds in both trees, the ratio head/base of the medians, and the target lines of both.
// Lower-is-better or higher-is-better is not guessed: read the ratio against the row's unit.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

function usage() {
  return 'usage: node scripts/bench-compare.mjs --base <rev> [--only <section>] [--runs <n>] [--keep]';
}

function parseArgs(argv) {
  const options = { base: null, only: 'gateway', runs: 3, keep: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--base') options.base = argv[++i] ?? null;
    else if (arg === '--only') options.only = argv[++i] ?? '';
    else if (arg === '--runs') options.runs = Number(argv[++i]);
    else if (arg === '--keep') options.keep = true;
    else if (arg === '--help' || arg === '-h') return usage();
    else return `unknown argument ${arg}\n${usage()}`;
  }
  if (options.base === null) return `--base is required\n${usage()}`;
  if (!/^[a-z0-9-]+$/.test(options.only)) return `--only needs one section name\n${usage()}`;
  if (!Number.isInteger(options.runs) || options.runs < 1 || options.runs > 20) return `--runs must be 1–20\n${usage()}`;
  return options;
}

const git = (cwd, ...args) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();

function run(command, args, cwd, { quiet = false } = {}) {
  return new Promise((done, fail) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NX_DAEMON: 'false', NX_NO_CLOUD: 'true' } });
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      if (!quiet) process.stderr.write(chunk);
    });
    child.stderr.on('data', (chunk) => process.stderr.write(chunk));
    child.on('error', fail);
    child.on('exit', (code) => (code === 0 ? done(out) : fail(new Error(`${command} ${args.join(' ')} in ${cwd} exited ${code}`))));
  });
}

// A row is printed as: two spaces, the name padded to its column, at least two spaces, the value right-aligned
// (thousands separated, or n/a), two spaces, the unit, then an optional note.
const ROW = /^ {2}(\S.*?\S) {2,}(-?[\d,]+(?:\.\d+)?|n\/a) {2}(\S+)(?: {2,}.*)?$/;
const TARGET = /^ {2}(PASS|MISS|n\/a) {2}(.*\S) {2,}(-?[\d,]+(?:\.\d+)?|n\/a) {2}(\S+) {2}(target .*)$/;

/** Rows of the printed bench output: `{ rows: Map<name, {value, unit}>, targets: Map<label, verdict line> }`. */
function readBenchOutput(text) {
  const rows = new Map();
  const targets = new Map();
  let inTargets = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('## ')) inTargets = line.startsWith('## Targets');
    const target = inTargets ? TARGET.exec(line) : null;
    if (target !== null) {
      targets.set(target[2], `${target[1]} ${target[3]} ${target[4]} (${target[5]})`);
      continue;
    }
    const row = inTargets ? null : ROW.exec(line);
    if (row === null || row[2] === 'n/a') continue;
    rows.set(row[1], { value: Number(row[2].replaceAll(',', '')), unit: row[3] });
  }
  return { rows, targets };
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

const fmt = (v) => (v === undefined || !Number.isFinite(v) ? 'n/a' : Math.abs(v) >= 100 ? v.toFixed(0) : v.toFixed(2));

async function main() {
  const options = parseArgs(process.argv.slice(2));
  if (typeof options === 'string') {
    (options.startsWith('usage:') ? console.log : console.error)(options);
    return options.startsWith('usage:') ? 0 : 2;
  }
  const head = resolve(import.meta.dirname, '..');
  const baseSha = git(head, 'rev-parse', '--verify', `${options.base}^{commit}`);
  const headSha = git(head, 'rev-parse', 'HEAD');
  const dirty = git(head, 'status', '--porcelain', '--untracked-files=no') !== '';
  const baseDir = join(tmpdir(), `baton-bench-base-${baseSha.slice(0, 12)}`);
  if (!existsSync(baseDir)) {
    console.error(`checking out ${baseSha.slice(0, 12)} into ${baseDir} (npm ci, build)…`);
    git(head, 'worktree', 'add', '--detach', baseDir, baseSha);
    await run('npm', ['ci', '--no-audit', '--no-fund'], baseDir, { quiet: true });
    await run('npm', ['run', 'build'], baseDir, { quiet: true });
  }
  const trees = { head: { dir: head, outputs: [] }, base: { dir: baseDir, outputs: [] } };
  try {
    for (let round = 0; round < options.runs; round++) {
      const order = round % 2 === 0 ? ['head', 'base'] : ['base', 'head'];
      for (const name of order) {
        console.error(`\n# round ${round + 1}/${options.runs}: ${name} (${options.only})`);
        const out = await run('node', ['--conditions=@baton/source', '--import', 'tsx', 'bench/main.ts', '--only', options.only], trees[name].dir);
        trees[name].outputs.push(readBenchOutput(out));
      }
    }
  } finally {
    if (!options.keep) git(head, 'worktree', 'remove', '--force', baseDir);
  }

  console.log(`# bench ${options.only}: head ${headSha.slice(0, 12)}${dirty ? ' (with uncommitted changes)' : ''} vs base ${baseSha.slice(0, 12)}, ${options.runs} rounds, order alternating`);
  console.log('row | unit | base median | head median | head/base');
  console.log('--- | --- | ---: | ---: | ---:');
  const names = [...new Set(trees.head.outputs.concat(trees.base.outputs).flatMap((o) => [...o.rows.keys()]))];
  for (const name of names) {
    const values = (tree) => tree.outputs.map((o) => o.rows.get(name)?.value).filter((v) => v !== undefined);
    const unit = (trees.head.outputs.concat(trees.base.outputs).find((o) => o.rows.has(name))?.rows.get(name) ?? {}).unit;
    const b = values(trees.base);
    const h = values(trees.head);
    const bm = b.length > 0 ? median(b) : undefined;
    const hm = h.length > 0 ? median(h) : undefined;
    const ratio = bm !== undefined && hm !== undefined && bm !== 0 ? hm / bm : undefined;
    console.log(`${name} | ${unit} | ${fmt(bm)} | ${fmt(hm)} | ${fmt(ratio)}`);
  }
  console.log('\ntargets per round (base → head):');
  const labels = [...new Set(trees.head.outputs.concat(trees.base.outputs).flatMap((o) => [...o.targets.keys()]))];
  for (const label of labels) {
    console.log(`- ${label}`);
    console.log(`  base: ${trees.base.outputs.map((o) => o.targets.get(label) ?? 'absent').join(' | ')}`);
    console.log(`  head: ${trees.head.outputs.map((o) => o.targets.get(label) ?? 'absent').join(' | ')}`);
  }
  return 0;
}

process.exitCode = await main();
