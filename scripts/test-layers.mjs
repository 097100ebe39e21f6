#!/usr/bin/env node
// `npm test`: the whole suite in two layers. The quick layer (units, properties, tests of one daemon) runs first and,
// when it fails, the run stops there; the slow layer (clusters of nats-server processes, real agents, the browser,
// crash loops) runs after it. Each layer is one vitest run; this script adds up their results, prints the slowest
// files and tests of both, and ends with the plain `N passed, N failed, N skipped` line CI reads.
//
// Arguments after `--` go to both vitest runs (`npm test -- --bail 1`). `BATON_TEST_LAYER=quick|slow` runs one layer.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

const root = join(import.meta.dirname, '..');

/** Test files of the slow layer (paths relative to the repository, forward slashes). */
const SLOW = [
  /^test\/cluster-/,
  /^packages\/runtime\/test\/cluster\/(ownership-race|shared-project-files)\.test\.ts$/,
  /^test\/e2e-(codex|pi|claude)-/,
  /^test\/e2e-handoff-chain\.test\.ts$/,
  /^test\/inspector-browser\.test\.ts$/,
  /^test\/memory-commit-crash\.test\.ts$/,
  /^test\/crash-resume\.test\.ts$/,
  /^test\/sigkill-replay\.test\.ts$/,
  /^test\/worker-death\.test\.ts$/,
  /^test\/runaway-fold\.test\.ts$/,
  /^test\/disk-full\.test\.ts$/,
  /^test\/gateway-slice-lineage\.test\.ts$/,
  /^packages\/cli\/test\/cluster-join\.test\.ts$/,
  /^test\/handoff-daemon\.test\.ts$/,
];

const vitest = join(root, 'node_modules', 'vitest', 'vitest.mjs');
const extra = process.argv.slice(2);
const only = process.env.BATON_TEST_LAYER;
if (only !== undefined && only !== 'quick' && only !== 'slow') {
  console.error(`BATON_TEST_LAYER must be quick or slow, not ${JSON.stringify(only)}`);
  process.exit(2);
}

function listFiles() {
  const listed = spawnSync(process.execPath, [vitest, 'list', '--filesOnly', '--json'], { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (listed.status !== 0) {
    process.stderr.write(listed.stderr);
    throw new Error(`vitest list exited ${listed.status}`);
  }
  return JSON.parse(listed.stdout).map((f) => f.file);
}

const files = listFiles();
const isSlow = (file) => SLOW.some((re) => re.test(relative(root, file).split('\\').join('/')));
const layers = [
  { name: 'quick', files: files.filter((f) => !isSlow(f)) },
  { name: 'slow', files: files.filter(isSlow) },
].filter((l) => only === undefined || l.name === only);

const outDir = mkdtempSync(join(tmpdir(), 'baton-test-layers-'));
const totals = { passed: 0, failed: 0, skipped: 0 };
const fileTimes = [];
const testTimes = [];
let stopped = null;

for (const layer of layers) {
  if (layer.files.length === 0) continue;
  const started = Date.now();
  console.log(`\n=== ${layer.name} layer: ${layer.files.length} test files ===\n`);
  const json = join(outDir, `${layer.name}.json`);
  const run = spawnSync(
    process.execPath,
    [vitest, 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${json}`, ...extra, ...layer.files],
    { cwd: root, stdio: 'inherit', env: { ...process.env, BATON_TEST_LAYER: layer.name } },
  );
  const counted = countResults(json);
  if (counted === null) {
    // No report: vitest itself failed (a config error, a crash). Count it as one failure, never as a pass.
    totals.failed++;
  } else {
    totals.passed += counted.passed;
    totals.failed += counted.failed;
    totals.skipped += counted.skipped;
  }
  const failed = run.status !== 0 || counted === null || counted.failed > 0;
  console.log(`=== ${layer.name} layer: ${failed ? 'FAILED' : 'passed'} in ${((Date.now() - started) / 1000).toFixed(0)} s ===`);
  if (failed) {
    stopped = layer.name;
    break;
  }
}
rmSync(outDir, { recursive: true, force: true });

printSlowest();
if (stopped !== null && layers.at(-1)?.name !== stopped) console.log(`the ${stopped} layer failed: the layers after it did not run`);
console.log(`${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped`);
process.exit(stopped === null ? 0 : 1);

/** Passed, failed and skipped tests of a vitest JSON report; a file that failed to load counts as one failure. */
function countResults(path) {
  let report;
  try {
    report = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return null;
  }
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  for (const file of report.testResults ?? []) {
    const name = relative(root, file.name);
    fileTimes.push({ name, ms: (file.endTime ?? 0) - (file.startTime ?? 0) });
    const tests = file.assertionResults ?? [];
    if (file.status === 'failed' && !tests.some((t) => t.status === 'failed')) failed++;
    for (const t of tests) {
      if (t.status === 'passed') passed++;
      else if (t.status === 'failed') failed++;
      else skipped++;
      testTimes.push({ name: `${name} > ${t.fullName ?? t.title}`, ms: t.duration ?? 0 });
    }
  }
  return { passed, failed, skipped };
}

function printSlowest() {
  const show = (title, rows) => {
    console.log(`\n${title}`);
    for (const r of [...rows].sort((a, b) => b.ms - a.ms).slice(0, 10)) console.log(`  ${(r.ms / 1000).toFixed(1).padStart(7)} s  ${r.name}`);
  };
  show('slowest test files:', fileTimes);
  show('slowest tests:', testTimes);
  console.log('');
}
