import { SessionInputSchema } from '@baton/actors';
import { OpenObjectSchema, WriterToolsSchema } from '@baton/protocol';
import { z } from 'zod';

/**
 * What a session is set up with at `open`, recorded in `session.opened`: the session machine's input and the
 * agent's own request prefix parts (system prompt, tools, writer tool map), kept as the agent sent them.
 */
export const SessionSetupSchema = z.object({
  input: SessionInputSchema,
  projectId: z.string(),
  model: z.string(),
  system: z.union([z.string(), z.array(z.string())]).nullable(),
  tools: z.array(OpenObjectSchema).nullable(),
  writerTools: WriterToolsSchema.nullable(),
});
export type SessionSetup = z.infer<typeof SessionSetupSchema>;
