import fc from 'fast-check';

/**
 * Property tests run with a fixed seed in CI (`CI=true`), so a rare counterexample cannot turn a landing red at
 * random; locally they explore a fresh seed each run. `FC_SEED=<n>` reproduces a reported failure.
 */
const seed = process.env['FC_SEED'] !== undefined ? Number(process.env['FC_SEED']) : process.env['CI'] === 'true' ? 20_261_201 : undefined;
if (seed !== undefined) fc.configureGlobal({ seed });
