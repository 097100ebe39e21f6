/**
 * How many streams a log holds per kind, kept in step with its appends so that answering does not walk every
 * stream (a walk reads one page per stream: slow, and it pulls the whole data file into memory).
 */

/** A stream's kind: its name up to and including the first `/` (`session/`, `writer/`), else the whole name. */
export function streamKind(stream: string): string {
  const slash = stream.indexOf('/');
  return slash < 0 ? stream : stream.slice(0, slash + 1);
}

export class StreamCounts {
  private readonly counts = new Map<string, number>();

  /** Counts the streams named by one walk. */
  static of(names: Iterable<string>): StreamCounts {
    const counts = new StreamCounts();
    for (const name of names) counts.added(name);
    return counts;
  }

  /** `stream` got its first record. */
  added(stream: string): void {
    const kind = streamKind(stream);
    this.counts.set(kind, (this.counts.get(kind) ?? 0) + 1);
  }

  /** `stream` lost all of its records. */
  removed(stream: string): void {
    const kind = streamKind(stream);
    const n = (this.counts.get(kind) ?? 0) - 1;
    if (n > 0) this.counts.set(kind, n);
    else this.counts.delete(kind);
  }

  /** A copy, kind → count. */
  snapshot(): Map<string, number> {
    return new Map(this.counts);
  }
}
