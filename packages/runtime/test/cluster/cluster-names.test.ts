import { describe, expect, it } from 'vitest';
import { clusterNames } from '../../src/cluster/cluster-names.ts';

describe('clusterNames', () => {
  it('names the stream, bucket, subjects and keys of a prefix', () => {
    const n = clusterNames('acme.baton');
    expect(n.logStream).toBe('ACME_BATON_LOG');
    expect(n.bucket).toBe('acme_baton_cluster');
    expect(n.logSubjects).toBe('acme.baton.log.>');
    expect(n.logSubject('s-1', 7)).toBe('acme.baton.log.s-1.7');
    expect(n.sessionFilter('s-1')).toBe('acme.baton.log.s-1.>');
    expect(n.msgId('s-1', 7, 2)).toBe('s-1-7-2');
    expect(n.epochKey('s-1', 2)).toBe('epoch.s-1.2');
    expect(n.ownerKey('s-1')).toBe('owner.s-1');
    expect(n.daemonKey('baton-1234')).toBe('daemon.baton-1234');
    expect(n.indexOf('acme.baton.log.s-1.42')).toBe(42);
    expect(n.indexOf('acme.baton.log.s-1.042')).toBeNaN();
    expect(n.indexOf('other.log.s.1')).toBeNaN();
  });

  it('refuses ids and indexes that would not be one subject token', () => {
    const n = clusterNames();
    expect(() => n.logSubject('a.b', 1)).toThrow(/invalid session id/);
    expect(() => n.logSubject('a', 0)).toThrow(/positive integer/);
    expect(() => n.epochKey('a>', 1)).toThrow(/invalid session id/);
    expect(() => n.daemonKey('x y')).toThrow(/invalid daemon id/);
    expect(() => clusterNames('bad prefix')).toThrow(/invalid subject prefix/);
  });
});
