import { renderPrompt } from '../templates/prompt-registry.ts';

/** The last message of the conversation before the rebuild: its role and, for an assistant, its finish reason. */
export interface LastMessageInfo {
  readonly role: 'user' | 'assistant' | 'tool' | 'system';
  readonly finishReason: string | null;
}

// Finish reasons that mean "the assistant asked for tool calls" (OpenAI, AI-SDK and legacy spellings).
const TOOL_CALL_FINISH = new Set(['tool_calls', 'tool-calls', 'tool_use', 'function_call']);

/**
 * The closing reminder of the rebuilt context, chosen by the last message: an assistant
 * that finished with tool calls → respond to the tool results and continue; an assistant with any other finish →
 * the previous turn ended, check the active task and continue; a tool result → process the tool results; a user or
 * system message, or none → no reminder (null).
 */
export function renderTailReminder(lastMessage: LastMessageInfo | null): string | null {
  if (lastMessage === null) return null;
  switch (lastMessage.role) {
    case 'assistant':
      return TOOL_CALL_FINISH.has(lastMessage.finishReason ?? '')
        ? renderPrompt('rebuild-tail-tool-calls', {}).trimEnd()
        : renderPrompt('rebuild-tail-stop', {}).trimEnd();
    case 'tool':
      return renderPrompt('rebuild-tail-tool', {}).trimEnd();
    case 'user':
    case 'system':
      return null;
  }
}
