import { describe, expect, it } from 'vitest';
import { MemoryStoreError } from '../../src/memory-errors.ts';
import { DEFAULT_EXTRACTIVE_SUMMARY_CAP, extractiveSummary } from '../../src/rebuild/extractive-summary.ts';
import type { ChatMessageLike } from '../../src/rebuild/message-parts.ts';
import { loadPrompt } from '../../src/templates/prompt-registry.ts';
import { TokenCounter } from '../../src/tokens/token-counter.ts';
import { LONE_SURROGATE, words } from './fixtures.ts';

const recount = new TokenCounter();

function call(id: string, name: string, args: unknown): object {
  return { id, type: 'function', function: { name, arguments: typeof args === 'string' ? args : JSON.stringify(args) } };
}

/** A short coding session: four requests, reads/edits/patches, one failing test run, a final reply. */
function session(): ChatMessageLike[] {
  return [
    { role: 'system', content: 'You are a coding agent.' },
    { role: 'user', content: 'Fix the login redirect: after sign-in users land on /404.' },
    { role: 'assistant', content: 'Looking at the router.', tool_calls: [call('c1', 'read', { path: 'src/router.ts' })] },
    { role: 'tool', tool_call_id: 'c1', content: 'export const routes = [...]' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        call('c2', 'edit', { file_path: 'src/router.ts', old_string: "'/home'", new_string: "'/'" }),
        call('c3', 'apply_patch', {
          patch: [
            '*** Begin Patch',
            '*** Update File: src/auth/session.ts',
            '@@',
            '-a',
            '+b',
            '*** Add File: test/login.test.ts',
            '+x',
            '*** End Patch',
          ].join('\n'),
        }),
      ],
    },
    { role: 'tool', tool_call_id: 'c2', content: 'ok' },
    { role: 'tool', tool_call_id: 'c3', content: 'Done!' },
    { role: 'user', content: [{ type: 'text', text: 'Now run the test suite.' }, { type: 'image_url', image_url: { url: 'x' } }] },
    { role: 'assistant', content: null, tool_calls: [call('c4', 'bash', { command: 'npm test' })] },
    {
      role: 'tool',
      tool_call_id: 'c4',
      content: [
        'PASS test/a.test.ts',
        'FAIL test/login.test.ts',
        "  TypeError: Cannot read properties of undefined (reading 'user')",
        '1 failed, 12 passed',
      ].join('\n'),
    },
    { role: 'user', content: 'Keep the old cookie name 😀 — do not rename it.' },
    {
      role: 'assistant',
      content: [{ type: 'tool_use', id: 'tu1', name: 'write', input: { path: 'src/auth/cookie.ts', content: 'x' } }],
    },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'tu1', content: 'Error: EACCES: permission denied' }] },
    { role: 'user', content: '   ' },
    { role: 'assistant', content: 'The redirect is fixed; one test still fails on a missing user fixture.' },
  ];
}

describe('extractiveSummary', () => {
  const summary = extractiveSummary(session());

  it('opens with the header saying it was produced without a model', () => {
    expect(summary.startsWith(loadPrompt('extractive-summary-header').trimEnd())).toBe(true);
    expect(summary).toMatch(/without a model/);
  });

  it('quotes every user request verbatim, newest first', () => {
    const requests = [
      'Keep the old cookie name 😀 — do not rename it.',
      'Now run the test suite.',
      'Fix the login redirect: after sign-in users land on /404.',
    ];
    const positions = requests.map((request) => summary.indexOf(request));
    expect(positions.every((p) => p >= 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    expect(summary).toContain('[request 3 of 3]\nKeep the old cookie name');
    expect(summary).not.toContain('You are a coding agent.');
  });

  it('lists the files named by tool-call arguments, most recent first, with the tools that touched them', () => {
    const files = summary.slice(summary.indexOf('## Files touched\n'), summary.indexOf('## Errors seen'));
    expect(files.trim().split('\n').slice(1)).toEqual([
      '- src/auth/cookie.ts (write)',
      '- test/login.test.ts (apply_patch)',
      '- src/auth/session.ts (apply_patch)',
      '- src/router.ts (edit, read)',
    ]);
  });

  it('lists error lines of tool results and assistant messages, newest first, naming the source', () => {
    const errors = summary.slice(summary.indexOf('## Errors seen\n'), summary.indexOf('## Last assistant message'));
    expect(errors.trim().split('\n').slice(1)).toEqual([
      '- (assistant) The redirect is fixed; one test still fails on a missing user fixture.',
      '- (write) Error: EACCES: permission denied',
      '- (bash) 1 failed, 12 passed',
      "- (bash) TypeError: Cannot read properties of undefined (reading 'user')",
      '- (bash) FAIL test/login.test.ts',
    ]);
  });

  it('ends with the last assistant message', () => {
    expect(summary.endsWith('## Last assistant message\nThe redirect is fixed; one test still fails on a missing user fixture.')).toBe(
      true,
    );
  });

  it('is deterministic and within the default cap', () => {
    expect(extractiveSummary(session())).toBe(summary);
    expect(recount.count(summary)).toBeLessThanOrEqual(DEFAULT_EXTRACTIVE_SUMMARY_CAP);
  });

  it('keeps the newest requests within the cap, cuts the first that does not fit and counts the omitted ones', () => {
    const messages: ChatMessageLike[] = Array.from({ length: 60 }, (_, i) => ({
      role: 'user',
      content: `REQ-${i} ${words(400, i + 1)} END-${i}`,
    }));
    for (const cap of [8_000, 3_000]) {
      const text = extractiveSummary(messages, { capTokens: cap });
      expect(recount.count(text)).toBeLessThanOrEqual(cap);
      expect(recount.count(text)).toBeGreaterThan(cap * 0.8);
      expect(text).toContain(`REQ-59 ${words(400, 60)} END-59`);
      const whole = messages.filter((_, i) => text.includes(`REQ-${i} ${words(400, i + 1)} END-${i}`)).length;
      const shown = [...text.matchAll(/^\[request (\d+) of 60\]$/gm)].map((m) => Number(m[1]));
      // Newest first, contiguous: 60, 59, 58, …
      expect(shown).toEqual(shown.map((_, k) => 60 - k));
      expect(whole).toBeGreaterThanOrEqual(shown.length - 1);
      expect(text).toContain(`(${60 - shown.length} older requests omitted to fit the summary budget)`);
      expect(text).not.toMatch(LONE_SURROGATE);
    }
  });

  it('caps files, errors and the last assistant message, and never exceeds a tiny cap', () => {
    const messages: ChatMessageLike[] = [
      { role: 'user', content: 'go' },
      ...Array.from({ length: 400 }, (_, i): ChatMessageLike => ({
        role: 'assistant',
        content: null,
        tool_calls: [call(`c${i}`, 'read', { path: `src/module-${i}/file-${i}.ts` })],
      })),
      ...Array.from({ length: 400 }, (_, i): ChatMessageLike => ({ role: 'tool', tool_call_id: `c${i}`, content: `Error: failure number ${i}` })),
      { role: 'assistant', content: words(5_000, 3) },
    ];
    const text = extractiveSummary(messages, { capTokens: 4_000 });
    expect(recount.count(text)).toBeLessThanOrEqual(4_000);
    expect(text).toMatch(/^\(\d+ more files not listed\)$/m);
    expect(text).toMatch(/^\(\d+ more error lines not listed\)$/m);
    expect(text).toMatch(/\[… \d+ tokens elided …\]/);
    expect(text).toContain('[request 1 of 1]\ngo');
    for (const cap of [0, 10, 150]) expect(recount.count(extractiveSummary(messages, { capTokens: cap }))).toBeLessThanOrEqual(cap);
  });

  it('renders (none) for empty lists and refuses a bad cap', () => {
    const text = extractiveSummary([]);
    expect(text.match(/\n\(none\)/g)).toHaveLength(4);
    expect(() => extractiveSummary([], { capTokens: -1 })).toThrow(MemoryStoreError);
    expect(() => extractiveSummary([], { capTokens: 1.5 })).toThrow(/non-negative integer/);
  });
});
