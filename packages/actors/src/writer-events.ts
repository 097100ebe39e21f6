import { WriterModeSchema } from '@baton/protocol';
import { z } from 'zod';
import { FailureSchema } from './session-events.ts';

/**
 * Events the writer actor consumes: effect results re-entering as logged events.
 */

export const ToolCallSchema = z.object({ id: z.string(), name: z.string(), arguments: z.string() });
export type ToolCall = z.infer<typeof ToolCallSchema>;

export const UsageSchema = z.object({
  prompt: z.number().int().nonnegative(),
  completion: z.number().int().nonnegative(),
  cached: z.number().int().nonnegative(),
});

export const ToolResultSchema = z.object({ id: z.string(), name: z.string(), ok: z.boolean(), output: z.string() });
export type ToolResult = z.infer<typeof ToolResultSchema>;

export const WriterEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('writer.prepared') }),
  z.object({
    type: z.literal('writer.prepare_failed'),
    outcome: z.enum(['skipped', 'failure']),
    reason: z.string(),
    failure: FailureSchema.optional(),
  }),
  z.object({
    type: z.literal('model.replied'),
    content: z.string().nullable(),
    reasoning: z.string().nullable(),
    toolCalls: z.array(ToolCallSchema),
    finishReason: z.string().nullable(),
    usage: UsageSchema,
  }),
  z.object({ type: z.literal('model.failed'), failure: FailureSchema, status: z.number().int().nullable() }),
  z.object({ type: z.literal('tools.completed'), results: z.array(ToolResultSchema) }),
  z.object({
    type: z.literal('validation.completed'),
    errors: z.array(z.string()),
    extract: z.array(z.string()),
    warnings: z.array(z.string()),
    /** The rules the errors break (`checkpoint-intent-unquoted`, …): a failure names them for the next writer. */
    rules: z.array(z.string()).optional(),
    /**
     * The draft is the very one the previous validation saw, with the same findings: the writer did nothing with the
     * reflection, and sending it again would change nothing.
     */
    unchanged: z.boolean().optional(),
  }),
  z.object({ type: z.literal('commit.completed'), files: z.array(z.object({ path: z.string(), hash: z.string() })) }),
  z.object({ type: z.literal('commit.failed'), message: z.string() }),
  z.object({ type: z.literal('writer.cancel'), reason: z.string() }),
]);
export type WriterEvent = z.infer<typeof WriterEventSchema>;

export const WriterInputSchema = z.object({
  writerId: z.string(),
  sessionId: z.string(),
  mode: WriterModeSchema,
  boundary: z.string(),
  maxReentries: z.number().int().nonnegative(),
  maxContinuations: z.number().int().nonnegative(),
});
export type WriterInput = z.infer<typeof WriterInputSchema>;
