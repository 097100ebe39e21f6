import type { IncomingMessage } from 'node:http';

const PROJECT_ID = /^[A-Za-z0-9_-]{1,100}$/;

/** The project an agent names in `x-baton-project` (null when it names none, or none usable as a project id). */
export function projectOf(headers: IncomingMessage['headers']): string | null {
  const value = headers['x-baton-project'];
  const text = Array.isArray(value) ? value[0] : value;
  return text !== undefined && PROJECT_ID.test(text) ? text : null;
}
