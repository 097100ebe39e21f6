import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { InspectorData, startInspector, type InspectorServer } from '@baton/inspector';
import { LmdbEventLog, readTimeline } from '@baton/runtime';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { conversation } from './support/conversation.ts';
import { recordSession, startRecordingDaemon, type RecordedSession } from './support/recorded-inspector-session.ts';

/** Debian's chromium; the test needs it (`.ci/run` installs it). */
const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
/** Screenshots land here (git-ignored), for a person to look at. */
const SHOTS = join(import.meta.dirname, '..', 'test-output', 'inspector');

/** The inspector in headless Chromium over a session a real daemon recorded (two writers, one overflow rebuild). */
describe('inspector in a browser', () => {
  let dataDir: string;
  let recorded: RecordedSession;
  let logWriters: readonly string[];
  let server: InspectorServer;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    const daemon = await startRecordingDaemon();
    dataDir = daemon.dataDir;
    try {
      recorded = await recordSession(daemon);
    } finally {
      await daemon.stop();
    }
    // What the log itself says, read the way `baton replay` reads it, to compare the page against.
    const log = LmdbEventLog.open({ path: join(dataDir, 'events'), readOnly: true });
    try {
      logWriters = readTimeline(log, recorded.sessionId).writerIds;
    } finally {
      await log.close();
    }
    server = await startInspector({ dataDir });
    await mkdir(SHOTS, { recursive: true });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on('pageerror', (err) => pageErrors.push(err.message));
    page.on('console', (message) => {
      if (message.type() === 'error') pageErrors.push(message.text());
    });
  }, 120_000);

  // The page's own scripts never throw or log an error (a 404 the page asked for on purpose is logged by the browser
  // as a failed resource, which the unknown-session test expects).
  const pageErrors: string[] = [];
  afterEach(() => {
    const unexpected = pageErrors.filter((e) => !/^Failed to load resource: .* 404/.test(e));
    pageErrors.length = 0;
    expect(unexpected).toEqual([]);
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
  });

  it('lists the session, draws every writer run and the rebuild on its timeline, and diffs a checkpoint version', async () => {
    await page.goto(server.url);
    const row = page.locator(`tr.session-row[data-session="${recorded.sessionId}"]`);
    await row.waitFor();
    expect(await page.locator('tr.session-row').count()).toBe(1);
    await page.screenshot({ path: join(SHOTS, 'sessions.png'), fullPage: true });

    await row.locator('a').click();
    await page.locator('.writer-bar').first().waitFor();
    // Every writer run in the log has its bar, coloured by how it settled; the rebuild has its marker.
    expect(logWriters.length).toBeGreaterThanOrEqual(2);
    const bars = page.locator('.writer-bar');
    expect(await bars.count()).toBe(logWriters.length);
    const attributes = async (name: string): Promise<(string | null)[]> => await Promise.all((await bars.all()).map((bar) => bar.getAttribute(name)));
    expect(await attributes('data-writer')).toEqual([...logWriters]);
    expect(await attributes('data-outcome')).toEqual(recorded.writers.map((w) => w.outcome));
    const markers = page.locator('.rebuild-marker');
    expect(await markers.count()).toBe(recorded.rebuilds);
    expect(await markers.first().textContent()).toContain('rebuild 1 · rendered');
    // uPlot drew the chart; its legend follows the cursor with the record, its time and the tokens there.
    expect(await page.locator('.timeline .uplot canvas').count()).toBe(1);
    await page.locator('.timeline .u-over').hover();
    expect(await page.locator('.timeline .u-legend .u-value').first().textContent()).toMatch(/^#\d+ · \d{4}-\d\d-\d\d /);
    expect(await page.locator('.timeline .u-legend .u-value').nth(1).textContent()).toMatch(/^\d{1,3}(,\d{3})*$/);

    // Hovering a bar shows its run: mode, what it covers, its LLM calls and cache hit rate, its failure.
    await bars.nth(1).hover();
    const tip = page.locator('#tooltip');
    await tip.waitFor({ state: 'visible' });
    const tipText = (await tip.textContent()) ?? '';
    for (const fact of ['mode', 'fork', 'covers up to', 'LLM calls', 'cache hit rate', 'failure']) expect(tipText).toContain(fact);
    await page.screenshot({ path: join(SHOTS, 'timeline.png'), fullPage: true });
    // The writer whose model call was refused: a failure bar, its kind on hover.
    await page.locator('.writer-bar[data-outcome="failure"]').hover();
    await tip.filter({ hasText: 'failure auth' }).waitFor();
    await page.screenshot({ path: join(SHOTS, 'timeline-failure.png'), fullPage: true });

    // The second checkpoint version against the first: lines added and removed.
    await page.locator('button.checkpoint-version[data-version="2"]').click();
    const diff = page.locator('.checkpoint-diff[data-version="2"]');
    await diff.waitFor();
    expect(await diff.locator('h2').textContent()).toContain('against v1');
    expect(await diff.locator('.diff-line.added').count()).toBeGreaterThan(0);
    expect(await diff.locator('.diff-line.removed').count()).toBeGreaterThan(0);
    await page.screenshot({ path: join(SHOTS, 'checkpoint-diff.png'), fullPage: true });
    // Long unchanged stretches are folded; unfolding them shows every line of the diff.
    const folds = diff.locator('.diff-fold');
    expect(await folds.count()).toBeGreaterThan(0);
    while ((await folds.count()) > 0) await folds.first().click();
    const diffReply = (await (await fetch(new URL(`api/sessions/${recorded.sessionId}/checkpoints/2`, server.url))).json()) as { lines: unknown[] };
    expect(await diff.locator('.diff-line').count()).toBe(diffReply.lines.length);

    // The rebuilt context: Baton's boundary message first, then the preserved tail.
    await page.locator('button.show-context[data-rebuild="1"]').click();
    const context = page.locator('.rebuilt-context[data-rebuild="1"]');
    await context.waitFor();
    expect(await context.locator('.context-message.inserted').count()).toBe(1);
    expect(await context.locator('.context-message.inserted .message-text').textContent()).toContain('## Session checkpoint');
    await page.screenshot({ path: join(SHOTS, 'rebuilt-context.png'), fullPage: true });
  });

  it('says so for a session the log does not have', async () => {
    await page.goto(new URL('s/no-such-session', server.url).href);
    const error = page.locator('p.error');
    await error.waitFor();
    expect(await error.textContent()).toContain('unknown session no-such-session');
  });

  it('follows a running session: a writer that starts while the page is open gets its bar', async () => {
    // The daemon reopens the log to write, which lmdb-js refuses in a process holding it read-only: the read-only
    // inspector is done (the tests above ran first), and this one reads through the daemon's own log.
    await server.close();
    const daemon = await startRecordingDaemon(dataDir);
    const live = await startInspector({ dataDir, data: InspectorData.over(dataDir, daemon.log) });
    try {
      await page.goto(new URL(`s/${recorded.sessionId}`, live.url).href);
      await page.locator('.writer-bar').nth(logWriters.length - 1).waitFor();
      expect(await page.locator('.writer-bar').count()).toBe(logWriters.length);
      // After the rebuild the ladder re-armed: a turn past the second rung starts one more writer.
      const settled = daemon.client.waitForEvent(recorded.sessionId, (e) => e.type === 'writer.settled', 30_000);
      await daemon.client.append(recorded.sessionId, conversation(1, { prefix: 'live', start: 20_000 }));
      const event = await settled;
      const newest = event.type === 'writer.settled' ? event.writer_id : '';
      await page.locator(`.writer-bar[data-writer="${newest}"][data-outcome="success"]`).waitFor();
      expect(await page.locator('.writer-bar').count()).toBe(logWriters.length + 1);
      await page.locator(`tr.writer-row[data-writer="${newest}"]`).waitFor();
      // Every bar lies inside the plot's width once the chart redrew for the new records.
      const strip = await page.locator('.writer-lanes').boundingBox();
      for (const bar of await page.locator('.writer-bar').all()) {
        const box = await bar.boundingBox();
        expect(box !== null && strip !== null && box.x >= strip.x && box.x + box.width <= strip.x + strip.width + 1).toBe(true);
      }
      await page.screenshot({ path: join(SHOTS, 'live.png'), fullPage: true });
    } finally {
      await live.close();
      await daemon.stop();
    }
  });
});
