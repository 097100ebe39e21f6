import { defineProject } from 'vitest/config';

export default defineProject({
  test: { name: 'gateway', include: ['test/**/*.test.ts'], environment: 'node', setupFiles: ['../../test/support/fast-check-seed.ts'] },
});
