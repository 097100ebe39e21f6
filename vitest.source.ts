import { defaultClientConditions, defaultServerConditions } from 'vite';

/**
 * Tests run the packages' TypeScript sources, not their build: every package's `exports` map puts the
 * `@baton/source` condition (→ `src/index.ts`) before `dist/`. Vite's resolver gets the condition for the test files
 * it transforms; the test processes get it as a node flag, so worker threads they start (without an `execArgv` of
 * their own) resolve the workspace packages to their sources too. Child processes started with explicit node flags
 * must pass `--conditions=@baton/source` themselves.
 */
export const SOURCE_CONDITION = '@baton/source';

export const sourceResolve = {
  resolve: { conditions: [SOURCE_CONDITION, ...defaultClientConditions] },
  ssr: { resolve: { conditions: [SOURCE_CONDITION, ...defaultServerConditions] } },
};

export const sourceExecArgv = [`--conditions=${SOURCE_CONDITION}`];

/**
 * Test-time limits of every project. A limit is a safety net against a hang, never a speed check: it is set far above
 * what any test takes on a machine loaded by other work (speed is measured by `npm run bench`).
 */
export const TEST_TIMEOUTS = { testTimeout: 60_000, hookTimeout: 60_000 } as const;

/** A package's test project: its `test/**` files, run on the sources, with the fixed fast-check seed in CI. */
export function packageProject(name: string) {
  return {
    ...sourceResolve,
    test: {
      name,
      include: ['test/**/*.test.ts'],
      environment: 'node' as const,
      setupFiles: ['../../test/support/fast-check-seed.ts'],
      execArgv: sourceExecArgv,
      ...TEST_TIMEOUTS,
    },
  };
}
