import { defineProject } from 'vitest/config';
import { sourceExecArgv, sourceResolve } from '../../vitest.source.ts';

export default defineProject({
  ...sourceResolve,
  test: { name: 'memory-store', include: ['test/**/*.test.ts'], environment: 'node', setupFiles: ['../../test/support/fast-check-seed.ts'], execArgv: sourceExecArgv },
});
