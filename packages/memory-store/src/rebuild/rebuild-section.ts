import type { TokenCount } from '../tokens/budgeted-read.ts';

/**
 * Fitting one section of the rebuilt context — a heading line and a body — into its token cap, heading included.
 */

// Heading and body can tokenise to a little more than the sum of their counts; re-plan at most this often.
const MAX_PLANS = 8;

/**
 * `heading + "\n" + body` with a body rendered by `renderBody(bodyBudget)`, such that the whole section takes at
 * most `capTokens` tokens. The first body budget is the cap minus the heading line; when the joined section still
 * exceeds the cap, the budget is lowered by the excess and the body rendered again. Returns null when the cap
 * cannot hold the heading and a non-empty body (a cap of 0 always gives null).
 */
export function fitSection(
  heading: string,
  capTokens: number,
  renderBody: (bodyBudget: number) => string,
  counter: TokenCount,
): string | null {
  let budget = capTokens - counter.count(`${heading}\n`);
  for (let plan = 0; plan < MAX_PLANS && budget > 0; plan += 1) {
    const body = renderBody(budget).replace(/\s+$/, '');
    if (body === '') return null;
    const section = `${heading}\n${body}`;
    const tokens = counter.count(section);
    if (tokens <= capTokens) return section;
    budget -= tokens - capTokens;
  }
  return null;
}

/** True when `text` is null or only whitespace. */
export function isBlank(text: string | null | undefined): boolean {
  return text === null || text === undefined || text.trim() === '';
}
