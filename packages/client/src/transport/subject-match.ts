/*
 * NATS subject rules for the in-memory bus: tokens separated by dots, `*` matches exactly one token, `>` (last token
 * only) matches one or more tokens. Publish subjects carry no wildcards.
 */

const WHITESPACE = /\s/;

/** Splits and checks a subscription subject; throws a `TypeError` when NATS would refuse it. */
export function parseSubscriptionSubject(subject: string): readonly string[] {
  const tokens = checkedTokens(subject);
  tokens.forEach((token, i) => {
    if (token === '>' && i !== tokens.length - 1) throw new TypeError(`invalid subject: ${JSON.stringify(subject)}`);
    if (token !== '*' && token !== '>' && (token.includes('*') || token.includes('>'))) {
      throw new TypeError(`invalid subject: ${JSON.stringify(subject)}`);
    }
  });
  return tokens;
}

/** Splits and checks a publish subject (no wildcards); throws a `TypeError` when NATS would refuse it. */
export function parsePublishSubject(subject: string): readonly string[] {
  const tokens = checkedTokens(subject);
  if (tokens.some((token) => token.includes('*') || token.includes('>'))) {
    throw new TypeError(`invalid publish subject: ${JSON.stringify(subject)}`);
  }
  return tokens;
}

/** Whether a subscription (pattern tokens) matches a publish subject (tokens). */
export function subjectMatches(pattern: readonly string[], subject: readonly string[]): boolean {
  for (let i = 0; i < pattern.length; i++) {
    const token = pattern[i];
    if (token === '>') return subject.length > i;
    if (i >= subject.length) return false;
    if (token !== '*' && token !== subject[i]) return false;
  }
  return pattern.length === subject.length;
}

function checkedTokens(subject: string): string[] {
  if (subject.length === 0 || WHITESPACE.test(subject)) throw new TypeError(`invalid subject: ${JSON.stringify(subject)}`);
  const tokens = subject.split('.');
  if (tokens.some((token) => token.length === 0)) throw new TypeError(`invalid subject: ${JSON.stringify(subject)}`);
  return tokens;
}
