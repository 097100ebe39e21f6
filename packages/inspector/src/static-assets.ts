import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** A file the inspector serves and its media type. */
export interface StaticAsset {
  readonly file: string;
  readonly type: string;
}

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/** The package's `static/` directory (next to `src/`, and to `dist/` once built). */
export const STATIC_DIR = fileURLToPath(new URL('../static/', import.meta.url));

/** uPlot's ES module and stylesheet, wherever the package manager put the library. */
function vendorFiles(): Map<string, string> {
  const require = createRequire(import.meta.url);
  const uplotDist = dirname(require.resolve('uplot'));
  return new Map([
    ['/vendor/uPlot.esm.js', join(uplotDist, 'uPlot.esm.js')],
    ['/vendor/uPlot.min.css', join(uplotDist, 'uPlot.min.css')],
  ]);
}

/**
 * The table of every path the page may load: `/` (the page), `/static/<file>` for the files of `static/` (listed
 * once, so no request can name a file outside it) and `/vendor/…` for uPlot.
 */
export function staticAssets(): ReadonlyMap<string, StaticAsset> {
  const assets = new Map<string, StaticAsset>();
  const add = (path: string, file: string): void => {
    const type = TYPES[extname(file)];
    if (type !== undefined) assets.set(path, { file, type });
  };
  for (const name of readdirSync(STATIC_DIR)) add(`/static/${name}`, join(STATIC_DIR, name));
  add('/', join(STATIC_DIR, 'index.html'));
  for (const [path, file] of vendorFiles()) add(path, file);
  return assets;
}
