// Type-aware lint for the TypeScript sources. Run with `npm run lint`.
// Goal: correctness rules that find bugs (exhaustive switches, dropped promises, unused code),
// not formatting or style. One TypeScript program from the root tsconfig serves every file.
import { readFileSync, readdirSync } from 'node:fs';
import { defineConfig, globalIgnores } from 'eslint/config';
import tseslint from 'typescript-eslint';

/*
 * Package boundaries: a package's sources import only the workspace packages its package.json declares, so the
 * dependency direction drawn in docs/architecture.md is checked on every import (a type import included), and a
 * package that reached for one it does not declare — the start of a circle — fails lint. The declared dependencies
 * are read here, so package.json stays the one place they are written.
 */
function packageBoundaries() {
  const dirs = readdirSync(new URL('./packages/', import.meta.url));
  return dirs.map((dir) => {
    const pkg = JSON.parse(readFileSync(new URL(`./packages/${dir}/package.json`, import.meta.url), 'utf8'));
    const allowed = Object.keys({ ...pkg.dependencies, ...pkg.peerDependencies })
      .filter((name) => name.startsWith('@baton/'))
      .map((name) => name.slice('@baton/'.length));
    const others = allowed.length === 0 ? '' : `(?!(?:${allowed.join('|')})(?:/|$))`;
    return {
      files: [`packages/${dir}/src/**/*.ts`],
      rules: {
        'no-restricted-imports': [
          'error',
          {
            patterns: [
              {
                regex: `^@baton/${others}`,
                message: `${pkg.name} may import only the workspace packages its package.json declares (${allowed.length === 0 ? 'none' : allowed.join(', ')}).`,
              },
              {
                // Another package's files by relative path: the same boundary, walked around.
                regex: `^(?:\\.\\./){2,}(?:packages/)?(?:${dirs.join('|')})/`,
                message: `${pkg.name} imports another package by its name (@baton/…), never by a relative path into it.`,
              },
            ],
          },
        ],
      },
    };
  });
}

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
  ...packageBoundaries(),
);
