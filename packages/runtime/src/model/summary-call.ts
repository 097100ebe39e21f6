import type { ProviderApi } from '@baton/protocol';
import { anthropicOf, type ModelClients } from './model-clients.ts';

/** One summary request: a system prompt and one user turn, answered with text, in the session's API. */
export async function summaryCall(
  api: ProviderApi,
  clients: ModelClients,
  request: { model: string; system: string; user: string; timeoutMs: number },
): Promise<string> {
  const options = { timeout: request.timeoutMs, maxRetries: 1 };
  switch (api) {
    case 'openai-chat': {
      const res = await clients.openai.chat.completions.create(
        { model: request.model, messages: [{ role: 'system', content: request.system }, { role: 'user', content: request.user }] },
        options,
      );
      return res.choices[0]?.message.content ?? '';
    }
    case 'openai-responses': {
      const res = await clients.openai.responses.create({ model: request.model, instructions: request.system, input: request.user, store: false }, options);
      return res.output_text;
    }
    case 'anthropic-messages': {
      const anthropic = await anthropicOf(clients)();
      const res = await anthropic.messages.create(
        { model: request.model, max_tokens: 8_192, system: request.system, messages: [{ role: 'user', content: request.user }] },
        options,
      );
      return res.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n');
    }
  }
}
