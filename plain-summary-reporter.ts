import type { Reporter, TestModule } from 'vitest/node';

/**
 * Prints one plain `N passed, N failed, N skipped` line at the end of a run. CI's log reader looks for that line;
 * it does not parse vitest's own summary.
 */
export default class PlainSummaryReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const mod of modules) {
      const tests = [...mod.children.allTests()];
      // A module that failed to load, or whose hooks failed, must count as a failure even when no test ran.
      if (mod.state() === 'failed' && !tests.some((t) => t.result().state === 'failed')) failed++;
      for (const t of tests) {
        const state = t.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
        else skipped++;
      }
    }
    console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
  }
}
