import { SessionInputSchema } from '@baton/actors';
import { MessageSchema, OpenObjectSchema, ProviderApiSchema, WriterHeadersSchema, WriterToolsSchema } from '@baton/protocol';
import { z } from 'zod';

/**
 * What a session is set up with at `open`, recorded in `session.opened`: the session machine's input and the
 * agent's own request prefix parts (system prompt, tools, writer tool map), kept as the agent sent them.
 */
export const SessionSetupSchema = z.object({
  input: SessionInputSchema,
  projectId: z.string(),
  model: z.string(),
  /** Absent in sessions recorded before sessions had an API: those are `openai-chat`. */
  api: ProviderApiSchema.optional(),
  system: z.union([z.string(), z.array(z.string()), z.array(OpenObjectSchema)]).nullable(),
  tools: z.array(OpenObjectSchema).nullable(),
  writerTools: WriterToolsSchema.nullable(),
  /** Fields of the agent's requests its fork-mode writers send too (absent: none). */
  params: OpenObjectSchema.optional(),
  /** Extra request headers for its writers (absent: none). */
  headers: WriterHeadersSchema.optional(),
  /**
   * The context the session inherited from the one it continues (a handoff): messages in the session's API that its
   * agent's requests carry right after the system prompt, byte for byte the same on every request (absent: none).
   */
  inherited: z.array(MessageSchema).optional(),
});
export type SessionSetup = z.infer<typeof SessionSetupSchema>;
