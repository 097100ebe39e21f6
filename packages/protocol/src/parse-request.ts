import type { z } from 'zod';
import type { IssueDetail } from './error-reply.ts';
import { ProtocolError } from './protocol-error.ts';

/**
 * Validates a decoded request body against its schema. Returns the typed value, or throws
 * `ProtocolError('bad_request')` whose message names the first problem and whose `details` is an `IssueDetail[]`
 * with one entry per failing path (e.g. `{ path: 'messages.0.role', message: 'Invalid option: …' }`).
 */
export function parseRequest<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const details = issueDetails(result.error.issues);
  const first = details[0];
  const summary = first === undefined ? 'invalid request' : `${first.path === '' ? 'body' : first.path}: ${first.message}`;
  const more = details.length > 1 ? ` (and ${details.length - 1} more)` : '';
  throw new ProtocolError('bad_request', `invalid request: ${summary}${more}`, details);
}

/** Flattens zod issues into `{ path, message }` entries; an unknown key becomes an entry at that key's path. */
export function issueDetails(issues: readonly z.core.$ZodIssue[]): IssueDetail[] {
  const details: IssueDetail[] = [];
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) details.push({ path: joinPath([...issue.path, key]), message: 'unknown field' });
    } else {
      details.push({ path: joinPath(issue.path), message: issue.message });
    }
  }
  return details;
}

function joinPath(path: readonly PropertyKey[]): string {
  return path.map((key) => String(key)).join('.');
}
