// A checkpoint version with its line diff against the version before it; long unchanged stretches fold away.
import { el, groupDigits, shortWriter, timeOf } from './format.js';

// Unchanged lines kept around each change; longer unchanged stretches become one line that unfolds on click.
const CONTEXT = 3;

function lineRow(line) {
  return el('div', { class: `diff-line ${line.kind}` }, el('span', { class: 'diff-sign', text: line.kind === 'added' ? '+' : line.kind === 'removed' ? '−' : ' ' }), line.text);
}

function foldedRows(lines) {
  const rows = [];
  let i = 0;
  while (i < lines.length) {
    if (lines[i].kind !== 'same') {
      rows.push(lineRow(lines[i++]));
      continue;
    }
    let end = i;
    while (end < lines.length && lines[end].kind === 'same') end++;
    const keepHead = i === 0 ? 0 : CONTEXT;
    const keepTail = end === lines.length ? 0 : CONTEXT;
    if (end - i <= keepHead + keepTail + 1) {
      for (; i < end; i++) rows.push(lineRow(lines[i]));
      continue;
    }
    for (let k = 0; k < keepHead; k++) rows.push(lineRow(lines[i + k]));
    const hidden = lines.slice(i + keepHead, end - keepTail);
    const fold = el('div', { class: 'diff-fold', role: 'button', tabindex: 0, text: `⋯ ${hidden.length} unchanged lines` });
    const unfold = () => fold.replaceWith(...hidden.map(lineRow));
    fold.addEventListener('click', unfold);
    fold.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' || event.key === ' ') unfold();
    });
    rows.push(fold);
    for (let k = end - keepTail; k < end; k++) rows.push(lineRow(lines[k]));
    i = end;
  }
  return rows;
}

export function checkpointDiffView(diff, sessionId) {
  const against = diff.previous === null ? 'first version: every line is new' : `against v${diff.previous}`;
  const who = diff.writerId === null ? 'restore' : shortWriter(diff.writerId, sessionId);
  return el(
    'section',
    { class: 'detail checkpoint-diff', 'data-version': diff.version },
    el('h2', { text: `checkpoint.md v${diff.version} ${against}` }),
    el(
      'p',
      { class: 'muted' },
      `committed ${timeOf(diff.at)} by ${who} (${diff.reason}), ${groupDigits(diff.bytes)} bytes · `,
      el('span', { class: 'diff-stat added', text: `+${diff.added}` }),
      ' ',
      el('span', { class: 'diff-stat removed', text: `−${diff.removed}` }),
    ),
    el('pre', { class: 'diff' }, foldedRows(diff.lines)),
  );
}
