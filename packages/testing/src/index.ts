/** Test kit: a `nats-server` launcher and the loopback OpenAI-compatible model server. */
export { startNatsServer, freePort, type NatsServerHandle, type NatsServerOptions } from './nats-server.ts';
export { startLoopbackModel } from './loopback-model/start-loopback-model.ts';
export { CHECKPOINT_COMPLETE, extractiveStep } from './loopback-model/extractive/extractive-writer.ts';
export { DEFAULT_CHECKPOINT_TEMPLATE, parseCheckpointTemplate } from './loopback-model/extractive/checkpoint-template.ts';
export type { CheckpointTemplate, TemplateSection } from './loopback-model/extractive/checkpoint-template.ts';
export { parseWriterPaths } from './loopback-model/extractive/writer-task.ts';
export type { WriterPaths } from './loopback-model/extractive/writer-task.ts';
export type { ChatMessage, ChatRequest, ChatTool } from './loopback-model/chat-request.ts';
export type {
  ErrorSpec,
  LoopbackModel,
  LoopbackModelOptions,
  LoopbackStats,
  RecordedRequest,
  ReplySpec,
  Responder,
  ScriptStep,
  ToolCallSpec,
} from './loopback-model/types.ts';
