export { startLoopbackModel } from './start-loopback-model.ts';
export { CHECKPOINT_COMPLETE, extractiveStep } from './extractive/extractive-writer.ts';
export { DEFAULT_CHECKPOINT_TEMPLATE, parseCheckpointTemplate } from './extractive/checkpoint-template.ts';
export type { CheckpointTemplate, TemplateSection } from './extractive/checkpoint-template.ts';
export { parseWriterPaths } from './extractive/writer-task.ts';
export type { WriterPaths } from './extractive/writer-task.ts';
export type { ChatMessage, ChatRequest, ChatTool } from './chat-request.ts';
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
} from './types.ts';
