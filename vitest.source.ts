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
