/**
 * Reads the CPU profiles a `CONC_BENCH_CPU_PROF=<dir>` run of the concurrency bench wrote and prints, per service run
 * and thread, the CPU time spent during the measured window (per append) and the functions with the most self time.
 *
 * `npx tsx bench/concurrency-profile.ts <dir> [top=25]`
 *
 * Only samples inside the window the bench recorded (`window.json`: the monotonic clock V8's profiler stamps its
 * samples with) count, so start-up, warm-up and shutdown are left out. Idle samples (`(idle)`, `(program)` of a thread
 * waiting) are reported apart from the CPU time.
 *
 * A sample's time is the wall-clock time since the one before, so the self times are wall time while the thread ran,
 * not CPU time: on a loaded machine a call that wakes another thread (`postMessage` to a worker, a socket write to the
 * NATS server) is often preempted by the thread it woke, and the wait is counted as its own. Read such rows against the
 * per-thread CPU figures from `/proc` printed above them.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly children?: readonly number[];
}

interface Profile {
  readonly nodes: readonly ProfileNode[];
  readonly startTime: number;
  readonly endTime: number;
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

interface Window {
  readonly from: number;
  readonly to: number;
  readonly appends: number;
  readonly pid: number;
  /** CPU ms per thread id during the window (from /proc). */
  readonly threads: Record<string, number>;
}

const IDLE = new Set(['(idle)', '(program)']);

function label(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  const file = url === '' ? '' : url.replace(/^.*\/(packages|node_modules|bench)\//, '$1/');
  return `${functionName === '' ? '(anonymous)' : functionName}${file === '' ? '' : ` ${file}:${lineNumber + 1}`}`;
}

function summarise(path: string, window: Window, top: number): void {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  let busy = 0;
  let idle = 0;
  let t = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = profile.timeDeltas[i] ?? 0;
    t += delta;
    // A sample covers the time since the one before.
    if (t < window.from || t > window.to) continue;
    const node = byId.get(profile.samples[i] as number);
    if (node === undefined) continue;
    const name = label(node);
    if (IDLE.has(node.callFrame.functionName)) {
      idle += delta;
      if (node.callFrame.functionName === '(idle)') continue;
    } else busy += delta;
    self.set(name, (self.get(name) ?? 0) + delta);
  }
  const span = window.to - window.from;
  console.log(
    `\n${path.split('/').slice(-2).join('/')}: busy ${(busy / 1000).toFixed(0)} ms of ${(span / 1000).toFixed(0)} ms (${((100 * busy) / span).toFixed(0)}%), ${(busy / window.appends).toFixed(1)} µs per append; idle/program ${(idle / 1000).toFixed(0)} ms`,
  );
  const rows = [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
  for (const [name, us] of rows) console.log(`  ${(us / 1000).toFixed(1).padStart(8)} ms ${((100 * us) / Math.max(1, busy)).toFixed(1).padStart(5)}%  ${name}`);
}

const dir = process.argv[2];
if (dir === undefined) throw new Error('usage: concurrency-profile.ts <dir> [top]');
const top = Number(process.argv[3] ?? 25);
for (const run of readdirSync(dir).sort()) {
  const runDir = join(dir, run);
  let window: Window;
  try {
    window = JSON.parse(readFileSync(join(runDir, 'window.json'), 'utf8')) as Window;
  } catch {
    continue;
  }
  console.log(`\n## ${run}: ${window.appends} appends in ${((window.to - window.from) / 1e6).toFixed(2)} s`);
  // Every thread's CPU from /proc, in creation order: the main thread (the process id) first; V8's platform threads
  // (GC helpers), libuv's pool, lmdb-js's writer and the worker threads after it. Only the JavaScript threads have a profile.
  const threads = Object.entries(window.threads).map(([tid, ms]) => [Number(tid), ms] as const).sort((a, b) => a[0] - b[0]);
  const total = threads.reduce((sum, [, ms]) => sum + ms, 0);
  console.log(`CPU ${total} ms, ${((1000 * total) / window.appends).toFixed(1)} µs per append; by thread (µs per append): ${threads.filter(([, ms]) => ms > 0).map(([tid, ms]) => `${tid === window.pid ? 'main' : tid} ${((1000 * ms) / window.appends).toFixed(1)}`).join(', ')}`);
  for (const file of readdirSync(runDir).filter((f) => f.endsWith('.cpuprofile')).sort()) summarise(join(runDir, file), window, top);
}
