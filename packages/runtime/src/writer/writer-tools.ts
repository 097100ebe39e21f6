import type { Task, ToolCall, ToolResult } from '@baton/actors';
import { MemoryStoreError, renderPrompt, type WriterFiles } from '@baton/memory-store';
import { renderTaskTree } from './writer-prompt.ts';
import { runShell } from './shell-tool.ts';
import type { ToolMap, WriterToolName } from './tool-map.ts';

/** Writer tools Baton implements; any other tool is answered "Tool not permitted". */
export const IMPLEMENTED_TOOLS: readonly WriterToolName[] = ['read', 'write', 'edit', 'apply_patch', 'glob', 'grep', 'task', 'shell'];

export interface ToolContext {
  readonly files: WriterFiles;
  readonly tasks: readonly Task[];
  /** Fork mode: agent tool name → Baton tool. Delta mode: null (Baton's own names). */
  readonly toolMap: ToolMap | null;
}

/** Names the writer sees for the tools it may call (the agent's names in fork mode). */
export function allowedToolNames(ctx: Pick<ToolContext, 'toolMap'>): string[] {
  if (ctx.toolMap === null) return [...IMPLEMENTED_TOOLS];
  return [...ctx.toolMap.entries()].filter(([, b]) => IMPLEMENTED_TOOLS.includes(b.tool)).map(([name]) => name);
}

function str(args: Record<string, unknown>, key: string): string {
  const v = args[key];
  if (typeof v !== 'string') throw new MemoryStoreError('invalid_argument', `argument "${key}" must be a string`);
  return v;
}

function optInt(args: Record<string, unknown>, key: string): number | undefined {
  const v = args[key];
  return typeof v === 'number' && Number.isInteger(v) ? v : undefined;
}

/**
 * Runs one tool call through the memory-store sandbox. Refusals and bad arguments come back as failed results the
 * model can read; a tool outside the allowed list completes with the "Tool not permitted" text.
 */
export async function runWriterTool(call: ToolCall, ctx: ToolContext): Promise<ToolResult> {
  const binding = ctx.toolMap === null ? ((IMPLEMENTED_TOOLS as readonly string[]).includes(call.name) ? { tool: call.name as WriterToolName, args: {} } : undefined) : ctx.toolMap.get(call.name);
  if (binding === undefined || !IMPLEMENTED_TOOLS.includes(binding.tool)) {
    return { id: call.id, name: call.name, ok: true, output: renderPrompt('tool-not-permitted', { TOOL: call.name, ALLOWED: allowedToolNames(ctx).join(', ') }) };
  }
  let raw: unknown;
  try {
    raw = call.arguments.trim() === '' ? {} : JSON.parse(call.arguments);
  } catch {
    return { id: call.id, name: call.name, ok: false, output: 'Error: the tool arguments are not valid JSON.' };
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    return { id: call.id, name: call.name, ok: false, output: 'Error: the tool arguments must be a JSON object.' };
  }
  const args: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(raw)) args[binding.args[k] ?? k] = v;
  try {
    switch (binding.tool) {
      case 'read': {
        const offset = optInt(args, 'offset');
        const limit = optInt(args, 'limit');
        const text = await ctx.files.read(str(args, 'path'), { ...(offset !== undefined ? { offset } : {}), ...(limit !== undefined ? { limit } : {}) });
        return { id: call.id, name: call.name, ok: true, output: text };
      }
      case 'write': {
        const r = await ctx.files.write(str(args, 'path'), str(args, 'content'));
        return { id: call.id, name: call.name, ok: true, output: `Wrote ${r.bytes} bytes to ${r.path}` };
      }
      case 'edit': {
        const r = await ctx.files.edit(str(args, 'path'), str(args, 'old_string'), str(args, 'new_string'), args['replace_all'] === true);
        return { id: call.id, name: call.name, ok: true, output: `Edited ${r.path} (${r.replacements} replacement${r.replacements === 1 ? '' : 's'})` };
      }
      case 'apply_patch': {
        const r = await ctx.files.applyPatch(str(args, 'patch'));
        return { id: call.id, name: call.name, ok: true, output: r.changes.map((c) => `${c.action} ${c.path}${c.movedFrom !== undefined ? ` (from ${c.movedFrom})` : ''}`).join('\n') || 'No changes.' };
      }
      case 'glob': {
        const path = typeof args['path'] === 'string' ? args['path'] : undefined;
        const r = await ctx.files.glob(str(args, 'pattern'), path);
        const lines = r.files.length === 0 ? ['No files matched.'] : r.files;
        return { id: call.id, name: call.name, ok: true, output: [...lines, ...(r.truncated ? ['(more files matched; narrow the pattern)'] : [])].join('\n') };
      }
      case 'grep': {
        const path = typeof args['path'] === 'string' ? args['path'] : undefined;
        const include = typeof args['include'] === 'string' ? args['include'] : undefined;
        const r = await ctx.files.grep(str(args, 'pattern'), path, include);
        const lines = r.matches.length === 0 ? ['No matches.'] : r.matches;
        return { id: call.id, name: call.name, ok: true, output: [...lines, ...(r.truncated ? ['(more lines matched; narrow the pattern)'] : [])].join('\n') };
      }
      case 'task':
        return { id: call.id, name: call.name, ok: true, output: renderTaskTree(ctx.tasks) };
      case 'shell':
        return { id: call.id, name: call.name, ok: true, output: await runShell(args['command'], ctx.files) };
      default:
        return { id: call.id, name: call.name, ok: true, output: renderPrompt('tool-not-permitted', { TOOL: call.name, ALLOWED: allowedToolNames(ctx).join(', ') }) };
    }
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return { id: call.id, name: call.name, ok: false, output: `Error: ${message}` };
  }
}
