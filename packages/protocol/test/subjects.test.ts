import { describe, expect, it } from 'vitest';
import { parseSessionSubject, SESSION_ID_PATTERN, subjects } from '../src/subjects.ts';

describe('subjects', () => {
  it('builds the v1 subjects under the default prefix', () => {
    const s = subjects();
    expect(s.open).toBe('baton.v1.open');
    expect(s.runtimeStatus).toBe('baton.v1.runtime.status');
    expect(s.runtimeDrain).toBe('baton.v1.runtime.drain');
    expect(s.append('s1')).toBe('baton.v1.session.s1.append');
    expect(s.tasks('s1')).toBe('baton.v1.session.s1.tasks');
    expect(s.checkpoint('s1')).toBe('baton.v1.session.s1.checkpoint');
    expect(s.rebuild('s1')).toBe('baton.v1.session.s1.rebuild');
    expect(s.status('s1')).toBe('baton.v1.session.s1.status');
    expect(s.close('s1')).toBe('baton.v1.session.s1.close');
    expect(s.events('s1')).toBe('baton.v1.session.s1.events');
    expect(s.sessionWildcard).toBe('baton.v1.session.*.*');
  });

  it('uses a configured prefix, including a multi-token one', () => {
    expect(subjects('acme').open).toBe('acme.v1.open');
    expect(subjects('acme.dev').append('x')).toBe('acme.dev.v1.session.x.append');
  });

  it.each(['', 'a..b', 'a.*', 'a.>', 'has space', '.a'])('refuses the prefix %j', (prefix) => {
    expect(() => subjects(prefix)).toThrow(TypeError);
  });

  it.each(['', 'a.b', 'a*', 'a>', 'a b', 'x'.repeat(129), 'ü'])('refuses the session id %j', (sid) => {
    expect(() => subjects().append(sid)).toThrow(TypeError);
  });

  it('accepts session ids of 1 and 128 allowed characters', () => {
    expect(SESSION_ID_PATTERN.test('a')).toBe(true);
    expect(SESSION_ID_PATTERN.test(`Az09_-${'x'.repeat(122)}`)).toBe(true);
  });
});

describe('parseSessionSubject', () => {
  it.each(['append', 'tasks', 'checkpoint', 'rebuild', 'status', 'close'] as const)('parses the %s verb', (verb) => {
    expect(parseSessionSubject(`baton.v1.session.abc-1_X.${verb}`)).toEqual({ sessionId: 'abc-1_X', verb });
  });

  it('round-trips every subject built by subjects()', () => {
    const s = subjects('acme.dev');
    expect(parseSessionSubject(s.rebuild('S9'), 'acme.dev')).toEqual({ sessionId: 'S9', verb: 'rebuild' });
  });

  it.each([
    ['events are not requests', 'baton.v1.session.abc.events'],
    ['unknown verb', 'baton.v1.session.abc.frobnicate'],
    ['other prefix', 'other.v1.session.abc.append'],
    ['other version', 'baton.v2.session.abc.append'],
    ['missing verb', 'baton.v1.session.abc'],
    ['extra token', 'baton.v1.session.abc.append.more'],
    ['empty session id', 'baton.v1.session..append'],
    ['not a session subject', 'baton.v1.open'],
  ])('returns null: %s', (_why, subject) => {
    expect(parseSessionSubject(subject)).toBeNull();
  });

  it('honours the prefix argument', () => {
    expect(parseSessionSubject('baton.v1.session.a.append', 'acme')).toBeNull();
    expect(parseSessionSubject('acme.v1.session.a.append', 'acme')).toEqual({ sessionId: 'a', verb: 'append' });
  });
});
