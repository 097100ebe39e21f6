import { defineConfig } from 'vitest/config';
import { sourceExecArgv, sourceResolve } from './vitest.source.ts';

export default defineConfig({
  test: {
    projects: [
      'packages/protocol',
      'packages/client',
      'packages/log-schema',
      'packages/actors',
      'packages/memory-store',
      'packages/testing',
      'packages/runtime',
      'packages/gateway',
      'packages/inspector',
      'packages/cli',
      {
        ...sourceResolve,
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          environment: 'node',
          setupFiles: ['test/support/fast-check-seed.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          execArgv: sourceExecArgv,
        },
      },
    ],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    reporters: ['default', './plain-summary-reporter.ts'],
  },
});
