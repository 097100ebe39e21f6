// The context a rebuild handed the agent, message by message, as the model saw it.
import { el, groupDigits, timeOf } from './format.js';

function messageBlock(m) {
  const badges = [
    m.inserted ? el('span', { class: 'badge inserted', text: 'Baton: checkpoint and memory' }) : null,
    m.cleared ? el('span', { class: 'badge cleared', text: 'output cleared' }) : null,
  ];
  const calls = m.toolCalls.map((c) => el('div', { class: 'tool-call', text: `→ ${c.name}(${c.arguments})` }));
  const results = m.toolResults.map((r) => el('div', { class: 'tool-result', text: `← ${r.callId}: ${r.text}` }));
  return el(
    'article',
    { class: `context-message role-${m.role}${m.inserted ? ' inserted' : ''}`, 'data-id': m.id },
    el('header', {}, el('span', { class: 'role', text: m.role }), ' ', el('code', { text: m.id }), ' ', badges),
    m.text !== '' ? el('pre', { class: 'message-text', text: m.text }) : null,
    calls,
    m.role === 'tool' && m.toolResults.length > 0 && m.text === '' ? results : null,
  );
}

export function rebuiltContextView(context) {
  const sections = context.sections.map((s) => `${s.name} ${groupDigits(s.tokens)}`).join(' · ');
  return el(
    'section',
    { class: 'detail rebuilt-context', 'data-rebuild': context.number },
    el('h2', { text: `Rebuilt context ${context.number} (${context.outcome})` }),
    el('p', { class: 'muted', text: `at ${timeOf(context.at)}, log #${context.seq} · boundary message ${groupDigits(context.tokens)} tokens${sections !== '' ? ` · ${sections}` : ''} · ${context.messages.length} messages` }),
    context.system !== null ? el('article', { class: 'context-message role-system' }, el('header', {}, el('span', { class: 'role', text: 'system' })), el('pre', { class: 'message-text', text: context.system })) : null,
    context.messages.map(messageBlock),
  );
}
