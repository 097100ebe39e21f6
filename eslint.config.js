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
const PACKAGE_DIRS = readdirSync(new URL('./packages/', import.meta.url));

function packagePatterns(dir) {
  const pkg = JSON.parse(readFileSync(new URL(`./packages/${dir}/package.json`, import.meta.url), 'utf8'));
  const allowed = Object.keys({ ...pkg.dependencies, ...pkg.peerDependencies })
    .filter((name) => name.startsWith('@baton/'))
    .map((name) => name.slice('@baton/'.length));
  const others = allowed.length === 0 ? '' : `(?!(?:${allowed.join('|')})(?:/|$))`;
  return [
    {
      regex: `^@baton/${others}`,
      message: `${pkg.name} may import only the workspace packages its package.json declares (${allowed.length === 0 ? 'none' : allowed.join(', ')}).`,
    },
    {
      // Another package's files by relative path: the same boundary, walked around.
      regex: `^(?:\\.\\./){2,}(?:packages/)?(?:${PACKAGE_DIRS.join('|')})/`,
      message: `${pkg.name} imports another package by its name (@baton/…), never by a relative path into it.`,
    },
  ];
}

/*
 * The runtime's folders, in layers: a folder imports only folders of lower layers, so no two import each other and
 * the daemon is composed of parts that do not know it. Lowest first: the clock, the commit-then-fold pipeline, the
 * LMDB event log, memory files, model clients and rebuild fitting; the cluster (ownership, replicated log, shared files); writer runs and the error
 * table; the host (worker pool, port RPC, actor hosting, rebuild rendering); replay; the daemon (protocol router,
 * session registry, composition); metrics. `src/index.ts` (the package's entry) and `src/assert-never.ts` stand
 * outside the layers.
 */
const RUNTIME_LAYERS = [['time', 'pipeline', 'event-log', 'memory', 'model', 'rebuild'], ['cluster'], ['writer', 'errors'], ['host'], ['replay'], ['daemon'], ['metrics']];

function runtimeFolderPatterns(folder) {
  const layer = RUNTIME_LAYERS.findIndex((l) => l.includes(folder));
  const above = RUNTIME_LAYERS.slice(layer).flat().filter((f) => f !== folder);
  if (above.length === 0) return [];
  return [
    {
      regex: `^(?:\\.\\./)+(?:${above.join('|')})/`,
      message: `runtime/src/${folder} may import only folders of lower layers (${RUNTIME_LAYERS.slice(0, layer).flat().join(', ') || 'none'}): see RUNTIME_LAYERS in eslint.config.js.`,
    },
  ];
}

function restricted(files, patterns) {
  return { files, rules: { 'no-restricted-imports': ['error', { patterns }] } };
}

function importBoundaries() {
  const folders = readdirSync(new URL('./packages/runtime/src/', import.meta.url), { withFileTypes: true }).filter((e) => e.isDirectory());
  for (const f of folders) if (!RUNTIME_LAYERS.flat().includes(f.name)) throw new Error(`packages/runtime/src/${f.name} is in no layer: add it to RUNTIME_LAYERS in eslint.config.js`);
  const configs = PACKAGE_DIRS.filter((dir) => dir !== 'runtime').map((dir) => restricted([`packages/${dir}/src/**/*.ts`], packagePatterns(dir)));
  // Options of one rule do not merge across configs: each runtime folder gets the package's patterns and its own.
  configs.push(restricted(['packages/runtime/src/*.ts'], packagePatterns('runtime')));
  for (const folder of RUNTIME_LAYERS.flat()) {
    configs.push(restricted([`packages/runtime/src/${folder}/**/*.ts`], [...packagePatterns('runtime'), ...runtimeFolderPatterns(folder)]));
  }
  return configs;
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
  ...importBoundaries(),
);
