import type { Message } from '@baton/protocol';
import { describe, expect, it } from 'vitest';
import { explicitText, latestUserRequests } from '../../src/writer/user-requests.ts';
import { renderGuidance, renderUserRequests } from '../../src/writer/writer-prompt.ts';

const user = (id: string, content: string): Message => ({ id, role: 'user', content });

describe("the writer task's blocks", () => {
  it('names how to meet every rule the previous draft broke, once per kind, and nothing when it broke none', () => {
    expect(renderGuidance([])).toBe('');
    const text = renderGuidance(['checkpoint-intent-unquoted', 'checkpoint-section-missing', 'checkpoint-italic-line', 'memory-entry-missing-why', 'nested-spillover', 'something-new']);
    expect(text.split('\n')[0]).toMatch(/refused and not committed/);
    expect(text).toContain('§1 must quote');
    expect(text.match(/Keep the checkpoint's title line/g)).toHaveLength(1);
    expect(text).toContain('"Why:"');
    expect(text).toContain('An index line reads exactly');
    expect(text).toContain('(something-new)');
  });

  it("quotes the user's requests line by line, and shows nothing without one", () => {
    expect(renderUserRequests([])).toBe('');
    expect(renderUserRequests(['Fix the build.\nKeep the API.'])).toMatch(/> Fix the build\.\n> Keep the API\./);
  });

  it("takes the newest explicit requests: an agent's context blocks alone are not one, the user's words in a turn are", () => {
    expect(explicitText('<environment_context>\n  <cwd>/w</cwd>\n</environment_context>')).toBe('');
    expect(explicitText('<system-reminder>today is Monday</system-reminder>\nPlease fix the reducer.')).toBe('Please fix the reducer.');
    const messages = [
      user('u1', 'First ask.'),
      user('u2', '<environment_context><cwd>/w</cwd></environment_context>'),
      { id: 'a1', role: 'assistant', content: 'ok' } as Message,
      user('u3', 'Second ask.'),
      user('baton-rebuild-s-1', 'the boundary'),
    ];
    expect(latestUserRequests(messages, [])).toEqual(['First ask.', 'Second ask.']);
    // What a fitted rebuild took out counts too, older than what the context still holds.
    expect(latestUserRequests(messages, [{ id: 'u0', text: 'The very first ask.' }])).toEqual(['The very first ask.', 'First ask.', 'Second ask.']);
    expect(latestUserRequests([user('x', 'a'), user('y', 'b'), user('z', 'c'), user('w', 'd')], [])).toEqual(['b', 'c', 'd']);
  });
});
