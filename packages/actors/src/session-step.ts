import type { SessionContext } from './session-context.ts';
import type { SessionEffect } from './session-effects.ts';
import type { SessionEvent } from './session-events.ts';

/** Emits one effect of the transition being taken, after the ones emitted before it. */
export type Emit = (effect: SessionEffect) => void;

/**
 * The body of one named action of the session machine. It sees the context as the transition has left it so far (the
 * actions of a transition, and of the regions' transitions for one event, run one after the other), emits its effects
 * in order and returns the next context. Pure.
 */
export type SessionStep<E extends SessionEvent = SessionEvent, P = undefined> = (ctx: SessionContext, event: E, emit: Emit, params: P) => SessionContext;

/** The session events of the given types. */
export type Events<T extends SessionEvent['type']> = Extract<SessionEvent, { type: T }>;
