// The sessions list: one row per session in the log, refreshed while the page is open.
import { getJson, poll } from './api.js';
import { el, groupDigits, shortWriter, timeOf } from './format.js';

function outcomeCell(row) {
  const o = row.last_outcome;
  if (o === null || o === undefined) return el('td', { class: 'muted', text: '–' });
  const failure = o.failure !== undefined ? ` (${o.failure.kind})` : '';
  return el('td', {}, el('span', { class: `outcome outcome-${o.outcome}`, text: `${shortWriter(o.writer_id, row.session_id)} ${o.outcome}${failure}` }));
}

function stateText(row) {
  if (row.error !== undefined) return `error: ${row.error}`;
  const base = row.closed ? 'closed' : row.state?.overflow ? 'overflow' : 'open';
  const over = row.state?.over_window ?? 0;
  return over > 0 ? `${base} · ${over} too long` : base;
}

function table(rows) {
  if (rows.length === 0) return el('p', { class: 'muted', text: 'No sessions in this event log yet.' });
  return el(
    'table',
    { class: 'sessions' },
    el('thead', {}, el('tr', {}, ['session', 'project', 'model', 'opened', 'tokens', 'usable window', 'last sent', 'writer', 'last writer', 'state'].map((h) => el('th', { text: h })))),
    el(
      'tbody',
      {},
      rows.map((row) =>
        el(
          'tr',
          { class: 'session-row', 'data-session': row.session_id },
          el('td', {}, el('a', { href: `/s/${encodeURIComponent(row.session_id)}`, 'data-nav': true, text: row.session_id })),
          el('td', { text: row.project_id ?? '–' }),
          el('td', { text: row.model ?? '–' }),
          el('td', { text: timeOf(row.opened_at) }),
          el('td', { class: 'num', text: groupDigits(row.state?.tokens) }),
          el('td', { class: 'num', text: groupDigits(row.state?.usable_window) }),
          // What the provider counted for the newest request; flagged when any request of the session did not fit.
          el('td', { class: (row.state?.over_window ?? 0) > 0 ? 'num too-long' : 'num', text: groupDigits(row.state?.last_prompt_tokens), title: (row.state?.over_window ?? 0) > 0 ? `${row.state.over_window} requests did not fit the model's window` : '' }),
          el('td', { text: row.state?.writer ?? '–' }),
          outcomeCell(row),
          el('td', { text: stateText(row) }),
        ),
      ),
    ),
  );
}

export function renderSessionsPage(root) {
  document.title = 'Baton inspector — sessions';
  const holder = el('section', { class: 'sessions-page' }, el('h1', { text: 'Sessions' }), el('p', { class: 'muted', text: 'Loading…' }));
  root.append(holder);
  const show = (reply) => {
    document.getElementById('data-dir').textContent = reply.dataDir;
    holder.replaceChildren(el('h1', { text: `Sessions (${reply.sessions.length})` }), table(reply.sessions));
  };
  const load = async () => {
    try {
      show(await getJson('/api/sessions'));
    } catch (err) {
      holder.replaceChildren(el('h1', { text: 'Sessions' }), el('p', { class: 'error', text: err.message }));
    }
  };
  void load();
  // The list is small: it is read again every two seconds and drawn again when it changed.
  const poller = poll(async () => JSON.stringify(await getJson('/api/sessions')), (text) => show(JSON.parse(text)), 2000);
  return poller;
}
