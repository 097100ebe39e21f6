import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { staticAssets } from '../src/static-assets.ts';

describe('staticAssets', () => {
  const assets = staticAssets();

  it('serves the page, its modules and uPlot from files that exist, with their media types', () => {
    expect(assets.get('/')?.type).toContain('text/html');
    expect(assets.get('/static/app.js')?.type).toContain('text/javascript');
    expect(assets.get('/static/inspector.css')?.type).toContain('text/css');
    expect(assets.get('/vendor/uPlot.esm.js')?.file).toMatch(/uplot[/\\]dist[/\\]uPlot\.esm\.js$/);
    expect(assets.get('/vendor/uPlot.min.css')?.type).toContain('text/css');
    for (const asset of assets.values()) expect(existsSync(asset.file)).toBe(true);
  });

  it('names only files it listed: no path reaches outside them', () => {
    for (const path of ['/static/../package.json', '/static/', '/package.json', '/src/index.ts']) expect(assets.has(path)).toBe(false);
  });
});
