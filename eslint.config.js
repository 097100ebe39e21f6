// Type-aware lint for the TypeScript sources. Run with `npm run lint`.
// Goal: correctness rules that find bugs (exhaustive switches, dropped promises, unused code),
// not formatting or style. One TypeScript program from the root tsconfig serves every file.
import { defineConfig, globalIgnores } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
  globalIgnores([
    '**/node_modules/',
    '**/dist/',
    '**/coverage/',
    '**/.nx/',
    '**/.baton/',
    // Plain JavaScript (this file, packages/cli/bin/baton.js) is not linted.
    '**/*.js',
    '**/*.mjs',
    '**/*.cjs',
  ]),
  {
    files: [
      'packages/*/src/**/*.ts',
      'packages/*/test/**/*.ts',
      'packages/cli/fixtures/**/*.ts',
      'packages/*/scripts/**/*.ts',
      'test/**/*.ts',
      'bench/**/*.ts',
    ],
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: {
        project: ['./tsconfig.json'],
        tsconfigRootDir: import.meta.dirname,
      },
    },
    linterOptions: {
      reportUnusedDisableDirectives: 'error',
    },
    rules: {
      // A switch over a union must name every member; a `default:` branch does not excuse a missing case.
      '@typescript-eslint/switch-exhaustiveness-check': [
        'error',
        {
          considerDefaultExhaustiveForUnions: false,
          requireDefaultForNonUnion: false,
          allowDefaultCaseForExhaustiveSwitch: true,
        },
      ],
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          args: 'after-used',
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          caughtErrors: 'all',
          caughtErrorsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          ignoreRestSiblings: true,
        },
      ],
      // Core correctness rules (not style) that TypeScript does not already enforce as errors.
      'no-unreachable': 'error',
      'no-unsafe-finally': 'error',
      'no-constant-binary-expression': 'error',
      'no-self-compare': 'error',
      'no-dupe-else-if': 'error',
      'no-cond-assign': 'error',
      'no-unused-private-class-members': 'error',
      // recommendedTypeChecked turns prefer-const on; a `let` that a closure reads before its single assignment
      // (a timer cleared by a callback that can run first) must stay `let`, or `const` would throw in the TDZ.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
    },
  },
);
