/**
 * The writers of one session as its published events describe them, for the sections that count writers and their
 * cache figures (`writers`, `writers-api`, `instant-compaction`).
 */
import type { PublishedEvent } from '@baton/protocol';

/** One writer of a session, from its events. */
export interface WriterRecord {
  readonly writerId: string;
  trigger: string;
  mode: string;
  outcome: string | null;
  /** `writer.cache_perf`: cached / prompt tokens over the writer's calls. */
  hitRate: number | null;
  prompt: number;
  cached: number;
  calls: number;
}

/** A session's writers in the order they started, and how many started and settled so far. */
export class WriterRecords {
  readonly list: WriterRecord[] = [];
  readonly #byId = new Map<string, WriterRecord>();
  started = 0;
  settled = 0;

  /** Folds one event of the session into the records; returns the writer it concerns, if any. */
  note(e: PublishedEvent): WriterRecord | undefined {
    if (e.type === 'writer.started') {
      this.started++;
      return Object.assign(this.#record(e.writer_id), { trigger: e.trigger, mode: e.mode });
    }
    if (e.type === 'writer.cache_perf') {
      return Object.assign(this.#record(e.writer_id), { hitRate: e.cache_hit_rate, prompt: e.total_input_tokens, cached: e.cache_read_tokens, calls: e.num_llm_calls });
    }
    if (e.type === 'writer.settled') {
      this.settled++;
      return Object.assign(this.#record(e.writer_id), { outcome: e.outcome });
    }
    return undefined;
  }

  #record(id: string): WriterRecord {
    let w = this.#byId.get(id);
    if (w === undefined) {
      w = { writerId: id, trigger: '', mode: '', outcome: null, hitRate: null, prompt: 0, cached: 0, calls: 0 };
      this.#byId.set(id, w);
      this.list.push(w);
    }
    return w;
  }
}
