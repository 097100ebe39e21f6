// A checkpoint version with its line diff against the version before it.
import { el, groupDigits, shortWriter, timeOf } from './format.js';

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
    el(
      'pre',
      { class: 'diff' },
      diff.lines.map((line) => el('div', { class: `diff-line ${line.kind}` }, el('span', { class: 'diff-sign', text: line.kind === 'added' ? '+' : line.kind === 'removed' ? '−' : ' ' }), line.text)),
    ),
  );
}
