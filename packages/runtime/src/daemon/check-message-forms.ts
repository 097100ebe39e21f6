import { ProtocolError, viewOf, type Message, type ProviderApi } from '@baton/protocol';

/**
 * Checks that appended messages have the form of the session's API: a chat session takes OpenAI chat messages and no
 * `native` form; a Responses or Anthropic session takes each message's `native` form, with `content` null and `role`
 * Baton's reading of it (so a client cannot state a role the model would not see). Throws `bad_request` naming every
 * message that does not fit; nothing is appended then.
 */
export function checkMessageForms(messages: readonly Message[], api: ProviderApi): void {
  const issues: { path: string; message: string }[] = [];
  messages.forEach((m, i) => {
    if (api === 'openai-chat') {
      if (m.native !== undefined) issues.push({ path: `messages.${i}.native`, message: 'native forms need a session opened with api openai-responses or anthropic-messages' });
      return;
    }
    if (m.native === undefined) {
      issues.push({ path: `messages.${i}.native`, message: `required in an ${api} session` });
      return;
    }
    if (m.content !== null) issues.push({ path: `messages.${i}.content`, message: 'must be null when the message has a native form' });
    const role = viewOf(m).role;
    if (m.role !== role) issues.push({ path: `messages.${i}.role`, message: `its native form reads as ${role}` });
  });
  if (issues.length > 0) throw new ProtocolError('bad_request', `invalid request: ${issues.map((d) => `${d.path}: ${d.message}`).join('; ')}`, issues);
}
