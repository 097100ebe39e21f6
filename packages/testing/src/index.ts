/** Test kit: a `nats-server` launcher and the loopback model server (OpenAI chat and Responses, Anthropic Messages). */

// NATS server
export { startNatsServer, freePort, type NatsServerHandle } from './nats-server.ts';
export { startNatsCluster, type NatsClusterHandle, type NatsClusterNode, type NatsClusterOptions } from './nats-cluster.ts';

// Loopback model: the server, its scripting and recording types, the writer-task parser tests script against, and the
// extractive writer a responder hands writer requests to (when it plays an agent's model itself)
export { startLoopbackModel } from './loopback-model/start-loopback-model.ts';
export type { UsageScale } from './loopback-model/usage-scale.ts';
export type {
  ErrorSpec,
  LoopbackApi,
  LoopbackModel,
  LoopbackModelOptions,
  LoopbackStats,
  RecordedRequest,
  ReplySpec,
  Responder,
  ScriptStep,
  ThinkingSpec,
  ToolCallSpec,
} from './loopback-model/types.ts';
export type { ChatMessage, ChatRequest } from './loopback-model/chat-request.ts';
export type { ResponsesInputItem, ResponsesRequest } from './loopback-model/responses-request.ts';
export type { AnthropicBlock, AnthropicMessage, AnthropicRequest } from './loopback-model/anthropic-request.ts';
export type {
  ConversationItem,
  ConversationRole,
  ConversationThinking,
  ConversationTool,
  ConversationToolCall,
  ConversationToolResult,
  ConversationView,
} from './loopback-model/conversation-view.ts';
export { MAX_CACHE_BREAKPOINTS } from './loopback-model/breakpoint-cache.ts';
export { parseWriterPaths } from './loopback-model/extractive/writer-task.ts';
export { extractiveStep, type ExtractiveOptions } from './loopback-model/extractive/extractive-writer.ts';

// Prometheus text, as a scrape of `/metrics` returns it
export { parsePrometheusText, sampleSum, type PrometheusSample } from './prometheus-text.ts';
