/** The first place where a replay disagrees with the log. */
export interface Divergence {
  /** Stream holding the disagreeing record, e.g. `session/<sid>` or `writer/<wid>`. */
  readonly stream: string;
  readonly seq: number;
  /** What disagreed, in words. */
  readonly reason: string;
  /** First differing path inside `expected`/`actual` (`""` for the whole value), when they are comparable values. */
  readonly path: string | null;
  /** What the replay derived. */
  readonly expected: unknown;
  /** What the log holds. */
  readonly actual: unknown;
}
