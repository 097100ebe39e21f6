import type { ProviderApi } from '@baton/protocol';
import { AnthropicWriterModel } from './anthropic-writer-model.ts';
import { ChatWriterModel } from './chat-writer-model.ts';
import { anthropicOf, type ModelClients } from './model-clients.ts';
import { ResponsesWriterModel } from './responses-writer-model.ts';
import type { WriterModel, WriterRequest } from './writer-model.ts';

/** The writer's model conversation in the session's API. */
export function createWriterModel(api: ProviderApi, clients: ModelClients, request: WriterRequest): WriterModel {
  switch (api) {
    case 'openai-chat':
      return new ChatWriterModel(clients.openai, request);
    case 'openai-responses':
      return new ResponsesWriterModel(clients.openai, request);
    case 'anthropic-messages':
      return new AnthropicWriterModel(anthropicOf(clients), request);
  }
}
