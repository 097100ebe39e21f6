// One session: its timeline, writer runs, rebuilds and checkpoint versions; kept current while it changes.
import { getJson, poll } from './api.js';
import { checkpointDiffView } from './checkpoint-diff.js';
import { el, groupDigits, percent, shortWriter, timeOf } from './format.js';
import { rebuiltContextView } from './rebuilt-context.js';
import { timelineChart } from './timeline-chart.js';

function summary(s) {
  const rungs = s.thresholds.map(groupDigits).join(' · ') || 'none';
  return el(
    'p',
    { class: 'summary' },
    `project ${s.projectId} · model ${s.model} · ${s.api} · ${s.fork ? 'fork' : 'delta'} mode · opened ${timeOf(s.openedAt)} · usable window ${groupDigits(s.usableWindow)} · rungs ${rungs} · ${s.records} records `,
    el('span', { class: `badge ${s.closed ? 'closed' : 'live'}`, id: 'live-state', title: 'the page reads new records once a second', text: s.closed ? 'closed' : 'open · updates live' }),
  );
}

// Where the session came from and where it went (a handoff, a new slice, a resume), as links.
function lineageLine(s) {
  if (s.lineage === undefined && s.successors === undefined) return null;
  const link = (id) => el('a', { href: `/s/${encodeURIComponent(id)}`, 'data-nav': true, text: id });
  const parts = [];
  if (s.lineage !== undefined) parts.push('continues ', link(s.lineage.from_session), ` (${s.lineage.kind}) `);
  if (s.successors !== undefined) {
    parts.push('continued by ');
    s.successors.forEach((x, i) => parts.push(...(i > 0 ? [', '] : []), link(x.session_id), ` (${x.kind})`));
  }
  return el('p', { class: 'lineage' }, ...parts);
}

function writersTable(s) {
  if (s.writers.length === 0) return el('p', { class: 'muted', text: 'No writer has run yet.' });
  return el(
    'table',
    { class: 'writers' },
    el('thead', {}, el('tr', {}, ['writer', 'outcome', 'trigger', 'mode', 'covers up to', 'LLM calls', 'cache hit rate', 'failure', 'files committed'].map((h) => el('th', { text: h })))),
    el(
      'tbody',
      {},
      s.writers.map((w) =>
        el(
          'tr',
          { class: 'writer-row', 'data-writer': w.writerId },
          el('td', { text: w.label }),
          el('td', {}, el('span', { class: `outcome outcome-${w.outcome}`, text: w.outcome })),
          el('td', { text: w.trigger ?? '–' }),
          el('td', { text: w.mode ?? '–' }),
          el('td', {}, el('code', { text: w.coversUpTo ?? '–' })),
          el('td', { class: 'num', text: String(w.llmCalls) }),
          el('td', { class: 'num', text: percent(w.cacheHitRate) }),
          el('td', { text: w.failure === null ? '–' : `${w.failure.kind}${w.failure.message !== null ? `: ${w.failure.message}` : ''}` }),
          el('td', { text: w.committedFiles.map((f) => f.split('/').at(-1)).join(', ') || '–' }),
        ),
      ),
    ),
  );
}

export function renderSessionPage(root, sessionId) {
  document.title = `Baton inspector — ${sessionId}`;
  const head = el('div', { class: 'session-head' }, el('p', {}, el('a', { href: '/', 'data-nav': true, text: '← sessions' })), el('h1', { text: sessionId }));
  const info = el('div', {});
  const chartBox = el('section', { class: 'timeline' });
  const writersBox = el('section', {});
  const rebuildsBox = el('section', {});
  const checkpointsBox = el('section', {});
  const detail = el('div', { id: 'detail' });
  root.append(head, info, el('h2', { text: 'Timeline' }), chartBox, writersBox, rebuildsBox, checkpointsBox, detail);
  let chart = null;
  let stopped = false;

  const open = async (path, view) => {
    try {
      detail.replaceChildren(view(await getJson(path)));
      detail.scrollIntoView({ block: 'start' });
    } catch (err) {
      detail.replaceChildren(el('p', { class: 'error', text: err.message }));
    }
  };

  const show = ({ session, checkpoints }) => {
    info.replaceChildren(...[summary(session), lineageLine(session)].filter((n) => n !== null));
    if (chart === null) chart = timelineChart(chartBox, session);
    else chart.update(session);
    writersBox.replaceChildren(el('h2', { text: `Writer runs (${session.writers.length})` }), writersTable(session));
    rebuildsBox.replaceChildren(
      el('h2', { text: `Rebuilds (${session.rebuilds.length})` }),
      session.rebuilds.length === 0
        ? el('p', { class: 'muted', text: 'No rebuild yet.' })
        : el(
            'ul',
            { class: 'rebuilds' },
            session.rebuilds.map((r) =>
              el(
                'li',
                {},
                `rebuild ${r.number}: ${r.reason} → ${r.outcome} at ${timeOf(r.at)} `,
                r.hasContext ? el('button', { class: 'show-context', 'data-rebuild': r.number, onclick: () => open(`/api/sessions/${encodeURIComponent(sessionId)}/rebuilds/${r.number}`, rebuiltContextView), text: 'show the rebuilt context' }) : null,
              ),
            ),
          ),
    );
    checkpointsBox.replaceChildren(
      el('h2', { text: `Checkpoint versions (${checkpoints.length})` }),
      checkpoints.length === 0
        ? el('p', { class: 'muted', text: 'No checkpoint committed yet.' })
        : el(
            'div',
            { class: 'versions' },
            checkpoints.map((v) =>
              el('button', {
                class: 'checkpoint-version',
                'data-version': v.version,
                title: `${timeOf(v.at)} · ${v.writerId === null ? 'restore' : shortWriter(v.writerId, sessionId)} · ${groupDigits(v.bytes)} bytes`,
                onclick: () => open(`/api/sessions/${encodeURIComponent(sessionId)}/checkpoints/${v.version}`, (diff) => checkpointDiffView(diff, sessionId)),
                text: `v${v.version} · ${v.writerId === null ? 'restore' : shortWriter(v.writerId, sessionId)}`,
              }),
            ),
          ),
    );
  };

  const load = async () => {
    try {
      const reply = await getJson(`/api/sessions/${encodeURIComponent(sessionId)}`);
      if (!stopped) show(reply);
    } catch (err) {
      if (!stopped) info.replaceChildren(el('p', { class: 'error', text: err.message }));
    }
  };
  void load();
  // Live: the revision grows with every record of the session or its writers; the page reads it once a second.
  const poller = poll(async () => (await getJson(`/api/sessions/${encodeURIComponent(sessionId)}/revision`)).revision, load, 1000);
  return {
    stop() {
      stopped = true;
      poller.stop();
      chart?.destroy();
    },
  };
}
