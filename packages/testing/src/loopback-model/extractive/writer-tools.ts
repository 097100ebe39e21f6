import type { ChatTool } from '../chat-request.ts';
import type { ConversationTool } from '../conversation-view.ts';

/** How to call one of the request's tools to read or write a whole file. */
export interface ToolBinding {
  readonly name: string;
  readonly pathArg: string;
  /** Argument carrying the file content (write tools only). */
  readonly contentArg: string | undefined;
  /** Fixed extra arguments, e.g. `{ command: 'create' }` for `str_replace_editor`-style tools. */
  readonly extra: Readonly<Record<string, string>>;
}

/** The read and write tools the fake writer will use, picked from the request's own tool definitions. */
export interface WriterToolSet {
  readonly read: ToolBinding | undefined;
  readonly write: ToolBinding | undefined;
}

/** Argument names that hold a file path, in preference order. */
export const PATH_ARGS = ['path', 'file_path', 'filePath', 'filename', 'file', 'absolute_path', 'target_file', 'notebook_path'] as const;
/** Argument names that hold whole-file content, in preference order. */
export const CONTENT_ARGS = ['content', 'text', 'contents', 'file_text', 'data'] as const;

const READ_NAME = /read|view|cat/i;
const WRITE_NAME = /write|create/i;
const PREFERRED_READ = /^(read|read_?file|view|cat)$/i;
const PREFERRED_WRITE = /^(write|write_?file|create_?file)$/i;

interface Schema {
  readonly properties: Readonly<Record<string, unknown>>;
  readonly required: readonly string[];
}

/** A tool definition as chat sends it, or as the neutral view gives it (any API). */
export type ToolDefinition = ChatTool | ConversationTool;

function definitionOf(tool: ToolDefinition): { name: string | undefined; parameters: Readonly<Record<string, unknown>> | undefined } {
  if ('type' in tool) return { name: tool.function?.name, parameters: tool.function?.parameters };
  return { name: tool.name, parameters: tool.parameters };
}

function schemaOf(params: Readonly<Record<string, unknown>> | undefined): Schema | undefined {
  const properties = params?.['properties'];
  if (typeof properties !== 'object' || properties === null) return undefined;
  const required = Array.isArray(params?.['required']) ? (params['required'] as unknown[]).filter((r) => typeof r === 'string') : [];
  return { properties: properties as Record<string, unknown>, required };
}

function commandEnum(schema: Schema): string[] {
  const command = schema.properties['command'];
  if (typeof command !== 'object' || command === null) return [];
  const values = (command as Record<string, unknown>)['enum'];
  return Array.isArray(values) ? values.filter((v): v is string => typeof v === 'string') : [];
}

function bind(tool: ToolDefinition, kind: 'read' | 'write'): { binding: ToolBinding; preferred: boolean } | undefined {
  const { name, parameters } = definitionOf(tool);
  const schema = schemaOf(parameters);
  if (name === undefined || schema === undefined) return undefined;
  const commands = commandEnum(schema);
  const command = kind === 'read' ? 'view' : 'create';
  const viaCommand = commands.includes(command);
  if (!viaCommand && !(kind === 'read' ? READ_NAME : WRITE_NAME).test(name)) return undefined;
  const pathArg = PATH_ARGS.find((a) => a in schema.properties);
  const contentArg = kind === 'write' ? CONTENT_ARGS.find((a) => a in schema.properties) : undefined;
  if (pathArg === undefined || (kind === 'write' && contentArg === undefined)) return undefined;
  const extra: Record<string, string> = viaCommand ? { command } : {};
  // A tool whose required arguments we cannot fill (e.g. `TodoWrite {todos}`) is not usable for files.
  const filled = new Set<string>([pathArg, ...(contentArg === undefined ? [] : [contentArg]), ...Object.keys(extra)]);
  if (schema.required.some((r) => !filled.has(r))) return undefined;
  return { binding: { name, pathArg, contentArg, extra }, preferred: (kind === 'read' ? PREFERRED_READ : PREFERRED_WRITE).test(name) };
}

function pick(tools: readonly ToolDefinition[], kind: 'read' | 'write'): ToolBinding | undefined {
  const candidates = tools.flatMap((tool) => {
    const bound = bind(tool, kind);
    return bound === undefined ? [] : [bound];
  });
  return (candidates.find((c) => c.preferred) ?? candidates[0])?.binding;
}

/**
 * Picks a whole-file read tool (name like read/view/cat, a path-like argument) and write tool (name like
 * write/create, path-like and content-like arguments) from the request's tools — Baton's own (`read`, `write`) or,
 * in fork mode, the agent's (`read_file {file_path}`, `Write`, `str_replace_editor` with `command`…). Takes chat
 * tool definitions or the neutral view's tools (Responses function tools, Anthropic tools with an `input_schema`).
 */
export function pickWriterTools(tools: readonly ToolDefinition[] | undefined): WriterToolSet {
  const list = tools ?? [];
  return { read: pick(list, 'read'), write: pick(list, 'write') };
}

/** The file path a tool call's arguments name, if any. */
export function pathOf(args: Readonly<Record<string, unknown>>): string | undefined {
  for (const key of PATH_ARGS) {
    const value = args[key];
    if (typeof value === 'string' && value !== '') return value;
  }
  return undefined;
}

/** Whether a tool call's arguments write content (whole-file content, an edit, or a `create` command). */
export function writesContent(args: Readonly<Record<string, unknown>>): boolean {
  return CONTENT_ARGS.some((k) => typeof args[k] === 'string') || typeof args['new_string'] === 'string' || args['command'] === 'create';
}

/** Builds the arguments of a call to `binding` on `path` (with `content` for writes). */
export function callArguments(binding: ToolBinding, path: string, content?: string): Record<string, string> {
  const args: Record<string, string> = { ...binding.extra, [binding.pathArg]: path };
  if (binding.contentArg !== undefined && content !== undefined) args[binding.contentArg] = content;
  return args;
}
