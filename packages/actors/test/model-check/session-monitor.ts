/**
 * The model check's per-path monitor of the session machine: tracks the effects along one explored path (writers
 * started and settled, rebuild and close replies) and checks that each transition keeps the promises they make.
 */
import { indexIds } from '../../src/index-list.ts';
import type { SessionContext } from '../../src/session-context.ts';
import type { SessionEffect, WriterStartEffect } from '../../src/session-effects.ts';
import type { SessionEvent } from '../../src/session-events.ts';
import { writerDueAfterFailures } from '../../src/writer-request.ts';
import type { Checks } from './graph-harness.ts';

const isSettledFor = (event: SessionEvent, writerId: string | undefined): event is Extract<SessionEvent, { type: 'writer.settled' }> =>
  event.type === 'writer.settled' && writerId !== undefined && event.writerId === writerId;

/** Effects tracked along one path. Copy-on-branch: `clone()` before extending a path two ways. */
export class SessionMonitor {
  started = new Map<string, string>();
  settled = new Set<string>();
  draining = false;
  /** Accepted rebuild request → replies so far. */
  rebuilds = new Map<string, number>();
  rendered = new Set<string>();
  compacted = new Set<string>();
  /** Timers started and not yet fired or cancelled. */
  timers = new Set<string>();
  timersEver = new Set<string>();

  clone(): SessionMonitor {
    const m = new SessionMonitor();
    m.started = new Map(this.started);
    m.settled = new Set(this.settled);
    m.draining = this.draining;
    m.rebuilds = new Map(this.rebuilds);
    m.rendered = new Set(this.rendered);
    m.compacted = new Set(this.compacted);
    m.timers = new Set(this.timers);
    m.timersEver = new Set(this.timersEver);
    return m;
  }

  /** Checks one step (prev --event--> next with effects) against everything seen before on this path. */
  step(prev: SessionContext, event: SessionEvent, effects: readonly SessionEffect[], next: SessionContext, check: Checks): void {
    if (event.type === 'drain.requested') this.draining = true;
    if (event.type === 'session.resumed' || event.type === 'drain.lifted') this.draining = false;

    // One writer per session; the slot is claimed in the same transition that starts it.
    const starts = effects.filter((e): e is WriterStartEffect => e.kind === 'writer.start');
    check.that(starts.length <= 1, `${starts.length} writers started in one step`);
    for (const s of starts) {
      check.that(!this.started.has(s.writerId), `writer ${s.writerId} started twice`);
      // A writer a rebuild starts: on a request only when the backoff after failures allows it; after a fitted rebuild
      // only when it asked for one, covering up to the boundary message it inserted.
      if (event.type === 'rebuild.requested') check.that(writerDueAfterFailures(prev, prev.rebuildsSinceFailure + 1), 'a rebuild asked for a writer while writers were backed off');
      check.that(event.type !== 'rebuild.rendered' && event.type !== 'rebuild.compacted', 'a rebuild result started a writer');
      if (s.trigger === 'rebuild' && event.type === 'messages.appended') check.that(s.boundary === prev.catchUp, 'a catch-up writer that covers another boundary than the one asked for');
      check.that(prev.writer === null || isSettledFor(event, prev.writer.writerId), 'a writer started while another one runs');
      check.that(next.writer?.writerId === s.writerId && next.writer.boundary === s.boundary, 'the slot was not claimed by the started writer');
      check.that(indexIds(next.index).includes(s.boundary), 'the boundary is not a message of the main slice');
      check.that(!this.draining, 'a writer started after a drain and before the session resumed');
      check.that(s.watermark === next.watermark, 'writer.start carries a watermark other than the stored one');
      this.started.set(s.writerId, s.boundary);
    }

    // Every started writer settles exactly once.
    const settled = effects.filter((e) => e.kind === 'publish' && e.event.type === 'writer.settled');
    const settlesCurrent = isSettledFor(event, prev.writer?.writerId);
    check.that(settled.length === (settlesCurrent ? 1 : 0), `${settled.length} settlements published for ${event.type}`);
    for (const e of settled) {
      if (e.kind !== 'publish' || e.event.type !== 'writer.settled') continue;
      const id = e.event.writer_id;
      check.that(this.started.has(id), `settled writer ${id} never started`);
      check.that(!this.settled.has(id), `writer ${id} settled twice`);
      this.settled.add(id);
    }
    for (const id of this.started.keys()) {
      check.that(this.settled.has(id) !== (next.writer?.writerId === id), `writer ${id} is neither running nor settled exactly once`);
    }

    // The watermark moves only on a success of the running writer, to the boundary frozen when it started.
    const success = settlesCurrent && event.outcome === 'success';
    if (next.watermark !== prev.watermark) check.that(success, `watermark moved on ${event.type}`);
    if (success) check.that(next.watermark === this.started.get(event.writerId), 'watermark is not the boundary frozen at start');

    if (event.type === 'drain.requested') check.that(next.pending === null && next.draining, 'drain kept a pending request');

    // The agent's own compaction with no usable checkpoint is answered at once: never a wait for a writer.
    const usable = prev.watermark !== null && event.type === 'rebuild.requested' && event.checkpointExists;
    if (event.type === 'rebuild.requested' && prev.rebuild === null && event.reason === 'compaction' && !usable) {
      check.that(!effects.some((e) => e.kind === 'timer.start') && next.rebuild?.phase === 'compacting', "the agent's compaction waited for a writer");
    }

    // Rebuilds: each request answered exactly once; thresholds never rebuild.
    const replies = effects.filter((e) => e.kind === 'rebuild.reply');
    const rebuildEffects = effects.filter((e) => e.kind === 'rebuild.render' || e.kind === 'rebuild.compact' || e.kind === 'rebuild.reply');
    if (event.type === 'messages.appended' || event.type === 'checkpoint.requested' || event.type === 'drain.requested' || event.type === 'close.requested') {
      check.that(rebuildEffects.length === 0, `${event.type} produced rebuild effects`);
    }
    if (event.type === 'rebuild.requested' && prev.rebuild !== null) {
      check.that(replies.length === 1 && replies[0]?.kind === 'rebuild.reply' && replies[0].requestId === event.requestId, 'a refused rebuild request is not answered once');
      check.that(next.rebuild === prev.rebuild, 'a refused rebuild request disturbed the running one');
    } else {
      if (event.type === 'rebuild.requested') {
        check.that(!this.rebuilds.has(event.requestId), 'rebuild request id reused');
        this.rebuilds.set(event.requestId, 0);
      }
      for (const r of replies) {
        if (r.kind !== 'rebuild.reply') continue;
        const n = this.rebuilds.get(r.requestId);
        check.that(n === 0, `rebuild ${r.requestId} answered ${n === undefined ? 'without a request' : 'twice'}`);
        this.rebuilds.set(r.requestId, 1);
        if (r.outcome === 'rebuilt') check.that(r.coveredUpTo === prev.watermark && r.coveredUpTo !== null && r.withContext, 'rebuilt does not cover up to the stored watermark');
        if (r.outcome === 'insert-failed') check.that(!this.compacted.has(r.requestId) && !r.withContext, 'insert-failed after compacting');
      }
    }
    for (const e of effects) {
      if (e.kind === 'rebuild.render') {
        check.that(e.watermark === next.watermark && e.watermark !== null, 'render from something else than the stored watermark');
        this.rendered.add(e.requestId);
      }
      if (e.kind === 'rebuild.compact') {
        check.that(!this.rendered.has(e.requestId), 'a rebuild with a usable checkpoint compacted');
        this.compacted.add(e.requestId);
      }
      if (e.kind === 'timer.start') {
        check.that(!this.timers.has(e.timerId), `timer ${e.timerId} started while running`);
        this.timers.add(e.timerId);
        this.timersEver.add(e.timerId);
      }
      if (e.kind === 'timer.cancel') {
        // Cancelling a timer that already fired is harmless (the close path does it); one never started is not.
        check.that(this.timersEver.has(e.timerId), `cancel of a timer never started: ${e.timerId}`);
        this.timers.delete(e.timerId);
      }
      const cancel = e as { kind: string; writerId?: string };
      if (cancel.kind === 'writer.cancel') {
        check.that(event.type === 'timer.fired' && prev.closeRequestId !== null && cancel.writerId === prev.writer?.writerId, 'a writer cancelled other than by the close wait');
      }
    }
    if (event.type === 'timer.fired') this.timers.delete(event.timerId);
    for (const id of this.timers) {
      const awaited = next.rebuild?.timerId === id || (next.closeRequestId !== null && id === `${next.input.sessionId}-close-${next.closeRequestId}`);
      check.that(awaited, `timer ${id} leaked`);
    }

    // Close: answered at once when idle or already closing, else when the running writer settles.
    const closeReplies = effects.filter((e) => e.kind === 'reply' && 'closed' in e.body);
    if (event.type === 'close.requested') {
      const immediate = prev.closeRequestId !== null || prev.writer === null;
      check.that(closeReplies.length === (immediate ? 1 : 0) && closeReplies.every((r) => r.kind === 'reply' && r.requestId === event.requestId), 'close not answered as it should be');
      if (prev.closeRequestId !== null) check.that(next.closeRequestId === prev.closeRequestId, 'a second close replaced the first');
      if (prev.closeRequestId === null) check.that(next.pending === null, 'close kept a queued request');
    } else if (prev.closeRequestId !== null && next.closeRequestId === null) {
      check.that(closeReplies.length === 1 && closeReplies[0]?.kind === 'reply' && closeReplies[0].requestId === prev.closeRequestId && next.closed, 'a finished close is not answered once');
    } else {
      check.that(closeReplies.length === 0, `${event.type} answered a close`);
    }
    if (event.type === 'rebuild.abandoned' && prev.rebuild?.requestId === event.requestId) {
      // Dropped without an answer: its requester is gone. A reply for it later would be one without a request.
      check.that(replies.length === 0 && next.rebuild === null, 'an abandoned rebuild was answered or kept');
      this.rebuilds.delete(event.requestId);
    }
    for (const [id, n] of this.rebuilds) {
      check.that(n === (next.rebuild?.requestId === id ? 0 : 1), `rebuild ${id} finished without exactly one reply (${n})`);
    }
  }
}
