declare const durable: unique symbol;

/**
 * A record the log holds: only {@link CommitThenFold.commit} hands one out, and {@link CommitThenFold.fold} takes
 * nothing else, so an actor can fold only what was made durable first (the type checker refuses a record built by
 * hand).
 */
export type Durable<Stored> = Stored & { readonly [durable]: true };

/** The two steps an actor's inputs go through, in this order. */
export interface CommitThenFoldSteps<Target, Input, Stored, Folded> {
  /** Makes `input` durable in the actor's log; resolves with the record as the log holds it. */
  commit(input: Input): Promise<Stored>;
  /** Folds a durable record into the actor `target` (and runs what the fold asks for); synchronous or not. */
  fold(target: Target, stored: Stored): Folded;
}

/**
 * Commit, then fold: the one path by which an actor consumes an input, for the session actors (committed on the main
 * thread, folded in their worker) and the writer actors (committed through the main thread, folded in the worker
 * that runs them). An input is appended to the actor's log and resolves durable before the actor sees it, so the
 * actor's state is always a fold of its log and a replay of the log reaches the same state.
 *
 * The two steps can be awaited apart (a session logs an input with the append before it and folds it in its own
 * turn); ordering the inputs of one actor is the caller's (a session's mailbox, a writer's queue).
 */
export class CommitThenFold<Target, Input, Stored, Folded> {
  readonly #steps: CommitThenFoldSteps<Target, Input, Stored, Folded>;

  constructor(steps: CommitThenFoldSteps<Target, Input, Stored, Folded>) {
    this.#steps = steps;
  }

  /** Appends `input` to the log; resolves once it is durable. */
  commit(input: Input): Promise<Durable<Stored>> {
    // The brand is a type only: the record is passed on as it is, with no promise or copy of its own.
    return this.#steps.commit(input) as Promise<Durable<Stored>>;
  }

  /** Folds a record `commit` made durable into `target`. */
  fold(target: Target, record: Durable<Stored>): Folded {
    return this.#steps.fold(target, record);
  }

  /** Both steps in turn: the input is durable before `target` folds it. */
  async consume(target: Target, input: Input): Promise<Awaited<Folded>> {
    return await this.fold(target, await this.commit(input));
  }
}
