import { describe, expect, it } from 'vitest';
import { foldEvent, foldStart } from '../src/fold.ts';
import type { WriterEffect } from '../src/writer-effects.ts';
import type { WriterEvent } from '../src/writer-events.ts';
import { writerMachine } from '../src/writer-machine.ts';

const input = { writerId: 'w1', sessionId: 's', mode: 'fork' as const, boundary: 'm9', maxReentries: 3, maxContinuations: 2 };
const reply = (content: string | null, tools = 0): WriterEvent => ({
  type: 'model.replied',
  content,
  reasoning: null,
  toolCalls: Array.from({ length: tools }, (_, i) => ({ id: `c${i}`, name: 'write', arguments: '{}' })),
  finishReason: tools > 0 ? 'tool_calls' : 'stop',
  usage: { prompt: 1000, completion: 10, cached: 900 },
});

function run(events: WriterEvent[]) {
  let step = foldStart<typeof writerMachine, WriterEffect>(writerMachine, input);
  const effects: WriterEffect[] = [...step.effects];
  for (const e of events) {
    step = foldEvent<typeof writerMachine, WriterEffect>(writerMachine, step.snapshot, e);
    effects.push(...step.effects);
  }
  return { value: step.snapshot.value, ctx: step.snapshot.context, effects };
}
const settleOf = (effects: WriterEffect[]) => effects.filter((e) => e.kind === 'settle');

describe('writer machine', () => {
  it('runs tools, validates, commits and settles once with the summed usage of its own calls', () => {
    const r = run([{ type: 'writer.prepared' }, reply(null, 2), { type: 'tools.completed', results: [] }, reply('CHECKPOINT_COMPLETE'), { type: 'validation.completed', errors: [], extract: [], warnings: [] }, { type: 'commit.completed', files: [] }]);
    expect(r.value).toBe('settled');
    expect(settleOf(r.effects)).toEqual([{ kind: 'settle', outcome: 'success', failure: null, reason: null, perf: { calls: 2, promptTokens: 2000, cachedTokens: 1800 } }]);
  });

  it('reminds after empty stops at most twice, then fails', () => {
    const r = run([{ type: 'writer.prepared' }, reply(''), reply(null), reply('  ')]);
    expect(r.effects.filter((e) => e.kind === 'reentered').length).toBe(2);
    expect(settleOf(r.effects)[0]).toMatchObject({ outcome: 'failure', failure: { kind: 'other' } });
  });

  it('re-enters at most 3 times on validation errors, then quarantines and fails with kind validation', () => {
    const bad: WriterEvent = { type: 'validation.completed', errors: ['missing §3'], extract: [], warnings: [] };
    const r = run([{ type: 'writer.prepared' }, reply('done'), bad, reply('done'), bad, reply('done'), bad, reply('done'), bad]);
    expect(r.ctx.reentries).toBe(3);
    expect(r.effects.some((e) => e.kind === 'quarantine')).toBe(true);
    expect(settleOf(r.effects)[0]).toMatchObject({ outcome: 'failure', failure: { kind: 'validation' } });
  });

  it('puts extraction before errors and commits with a warning when only budgets remain over', () => {
    const over: WriterEvent = { type: 'validation.completed', errors: ['x'], extract: ['§5 over budget'], warnings: [] };
    const only: WriterEvent = { type: 'validation.completed', errors: [], extract: ['§5 over budget'], warnings: [] };
    const r = run([{ type: 'writer.prepared' }, reply('done'), over, reply('done'), only, reply('done'), only, reply('done'), only]);
    const calls = r.effects.filter((e) => e.kind === 'model.call');
    expect(calls[1]).toMatchObject({ nudge: { kind: 'extraction' } });
    expect(r.effects.at(-1)).toMatchObject({ kind: 'commit', warnings: ['§5 over budget'] });
  });

  it('settles as failure on a model error, skipped without a fork prefix, cancelled on cancel, exactly once', () => {
    expect(settleOf(run([{ type: 'writer.prepared' }, { type: 'model.failed', status: 429, failure: { kind: 'transient', retryable: true } }]).effects)[0]).toMatchObject({ outcome: 'failure', failure: { kind: 'transient', retryable: true } });
    expect(settleOf(run([{ type: 'writer.prepare_failed', outcome: 'skipped', reason: 'no fork prefix' }]).effects)[0]).toMatchObject({ outcome: 'skipped' });
    const c = run([{ type: 'writer.prepared' }, { type: 'writer.cancel', reason: 'drain' }, { type: 'writer.cancel', reason: 'again' }, reply('late')]);
    expect(settleOf(c.effects)).toHaveLength(1);
    expect(settleOf(c.effects)[0]).toMatchObject({ outcome: 'cancelled' });
  });
});
