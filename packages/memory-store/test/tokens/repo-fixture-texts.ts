import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

/** Folders whose every file is fixture text: recorded agent traffic and logs, the demo's files, prompts, docs. */
const FOLDERS = ['test/fixtures', 'test/support', 'packages/cli/fixtures', 'docs', 'packages/memory-store/src', 'packages/runtime/src/host'];

/** A text of the corpus, named for mismatch reports. */
export interface NamedText {
  readonly name: string;
  readonly text: string;
}

/**
 * Every fixture text of the repository: each file of the folders above, every package's prompts and README, the
 * `*fixture*` files of the packages' tests; each whole, line by line, and (JSON and NDJSON) every string value inside.
 */
export function repoFixtureTexts(): NamedText[] {
  const files = new Set<string>();
  for (const folder of FOLDERS) for (const file of filesUnder(join(ROOT, folder))) files.add(file);
  files.add(join(ROOT, 'README.md'));
  for (const pkg of readdirSync(join(ROOT, 'packages'))) {
    const dir = join(ROOT, 'packages', pkg);
    for (const file of filesUnder(join(dir, 'prompts'))) files.add(file);
    for (const file of filesUnder(join(dir, 'test'))) if (/fixture/i.test(relative(dir, file))) files.add(file);
    for (const file of filesUnder(dir, 1)) if (file.endsWith('README.md')) files.add(file);
  }
  const texts: NamedText[] = [];
  for (const file of [...files].sort()) {
    const name = relative(ROOT, file);
    const text = readFileSync(file, 'utf8');
    texts.push({ name, text });
    const lines = new Set(text.split('\n'));
    for (const line of lines) if (line.length > 0) texts.push({ name: `${name} (a line)`, text: line });
    if (name.endsWith('.json')) for (const s of new Set(stringsIn(JSON.parse(text)))) texts.push({ name: `${name} (a string)`, text: s });
    if (name.endsWith('.ndjson')) {
      const strings = new Set(text.split('\n').filter((l) => l.trim() !== '').flatMap((l) => stringsIn(JSON.parse(l))));
      for (const s of strings) texts.push({ name: `${name} (a string)`, text: s });
    }
  }
  return texts;
}

/** Files under `dir`, `depth` folders deep at most (none when `dir` does not exist). */
function filesUnder(dir: string, depth = Number.POSITIVE_INFINITY): string[] {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const entry of entries) {
    if (entry === 'node_modules' || entry === 'dist') continue;
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) {
      if (depth > 1) out.push(...filesUnder(path, depth - 1));
    } else {
      out.push(path);
    }
  }
  return out;
}

function stringsIn(value: unknown): string[] {
  if (typeof value === 'string') return value.length > 0 ? [value] : [];
  if (Array.isArray(value)) return value.flatMap(stringsIn);
  if (value !== null && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => [k, ...stringsIn(v)]);
  return [];
}
