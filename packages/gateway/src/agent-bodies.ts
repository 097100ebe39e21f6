import type { AgentApi } from './agent-api.ts';
import type { AgentRequest } from './agent-request.ts';
import { ParsedPrefixes } from './parsed-prefixes.ts';

/**
 * Reads the request bodies of the recorded APIs. A body that repeats one sent before by the same credential under the
 * same session name, up to the end of its conversation, has only its new part parsed (`ParsedPrefixes`).
 */
export class AgentBodies {
  readonly #parsed = new ParsedPrefixes();

  /** Bodies of 64 KiB and more read so far: parsed whole, or only from where the one before them ended. */
  get counts(): { readonly whole: number; readonly newPart: number } {
    return { whole: this.#parsed.misses, newPart: this.#parsed.hits };
  }

  /** `body` as a request of `api`, null when it is not one; `owner` and `session` (if named) say whose it is. */
  read(api: AgentApi, body: Buffer, owner: string, session: string | null): AgentRequest | null {
    let json: unknown;
    try {
      json = this.#parsed.parse(`${api.api} ${owner} ${session ?? ''}`, api.member, body);
    } catch {
      return null;
    }
    return api.read(json);
  }
}
