/**
 * Maps Baton's writer tools onto the agent's own tools for fork mode: the request must carry the agent's
 * tool definitions unchanged, so the writer calls the agent's names and Baton runs its sandboxed implementation.
 */

import { WRITER_TOOL_ARGS, type ProviderApi, type WriterToolName, type WriterTools } from '@baton/protocol';

export type { WriterToolName };

/** Baton's writer tools (their argument names are the protocol's `WRITER_TOOL_ARGS`). */
export const WRITER_TOOLS = Object.keys(WRITER_TOOL_ARGS) as readonly WriterToolName[];

export interface ToolBinding {
  readonly tool: WriterToolName;
  /** Agent argument name → Baton argument name. */
  readonly args: Readonly<Record<string, string>>;
}

/** Agent tool name → binding. */
export type ToolMap = ReadonlyMap<string, ToolBinding>;

export interface ResolvedToolMap {
  readonly map: ToolMap;
  /** Fork mode is possible only when a writing tool is mapped. */
  readonly forkPossible: boolean;
  readonly reason: string | null;
}

/** The agent's `open.writer_tools` declaration. */
type Declared = WriterTools;

/** Names coding agents commonly give Baton's tools (compared case-insensitively, `-`/`_` ignored). */
const NAME_HINTS: Readonly<Record<WriterToolName, readonly string[]>> = {
  read: ['read', 'readfile', 'view', 'viewfile', 'cat', 'openfile'],
  write: ['write', 'writefile', 'createfile', 'create', 'writetofile'],
  edit: ['edit', 'editfile', 'strreplace', 'replaceinfile', 'strreplacebasededittool', 'replace'],
  apply_patch: ['applypatch', 'patch'],
  glob: ['glob', 'findfiles', 'listfiles'],
  grep: ['grep', 'search', 'searchfiles', 'ripgrep', 'rg'],
  task: [],
  shell: ['bash', 'shell', 'execcommand', 'exec', 'runcommand', 'runshellcommand', 'terminal', 'localshell'],
};

/** Argument names coding agents commonly use for Baton's arguments. */
const ARG_HINTS: Readonly<Record<string, readonly string[]>> = {
  path: ['path', 'file_path', 'filePath', 'filepath', 'filename', 'file', 'target_file', 'absolute_path'],
  content: ['content', 'text', 'contents', 'file_text', 'data', 'body'],
  old_string: ['old_string', 'oldString', 'old_text', 'old_str', 'search', 'find'],
  new_string: ['new_string', 'newString', 'new_text', 'new_str', 'replacement', 'replace'],
  replace_all: ['replace_all', 'replaceAll'],
  offset: ['offset', 'start_line', 'line', 'from'],
  limit: ['limit', 'num_lines', 'lines', 'max_lines'],
  patch: ['patch', 'input', 'diff', 'patch_text'],
  pattern: ['pattern', 'glob', 'query', 'regex'],
  include: ['include', 'file_pattern', 'glob_pattern'],
  operation: ['operation', 'op', 'action'],
  command: ['command', 'cmd', 'script'],
};

/** Arguments a tool cannot work without. */
const REQUIRED: Readonly<Record<WriterToolName, readonly string[]>> = {
  read: ['path'],
  write: ['path', 'content'],
  edit: ['path', 'old_string', 'new_string'],
  apply_patch: ['patch'],
  glob: ['pattern'],
  grep: ['pattern'],
  task: ['operation'],
  shell: ['command'],
};

const norm = (s: string): string => s.toLowerCase().replace(/[-_]/g, '');

interface AgentTool {
  readonly name: string;
  readonly properties: readonly string[];
}

/**
 * The agent's tools with their argument names, in any API's shape: chat `{function: {name, parameters}}`, Responses
 * `{type: 'function', name, parameters}`, Anthropic `{name, input_schema}`. A Responses custom tool (free-form input,
 * such as Codex's `apply_patch`) takes one argument, `input`: its text.
 */
function agentToolsOf(tools: readonly unknown[] | null): AgentTool[] {
  return (tools ?? []).flatMap((t) => {
    const tool = t as { type?: unknown; name?: unknown; function?: { name?: unknown; parameters?: { properties?: unknown } }; parameters?: { properties?: unknown }; input_schema?: { properties?: unknown } };
    const name = tool.function?.name ?? tool.name;
    if (typeof name !== 'string') return [];
    if (tool.type === 'custom') return [{ name, properties: [CUSTOM_TOOL_INPUT] }];
    const props = (tool.function?.parameters ?? tool.parameters ?? tool.input_schema)?.properties;
    return [{ name, properties: props !== null && typeof props === 'object' ? Object.keys(props) : [] }];
  });
}

/** The one argument a free-form (custom) tool call has, as Baton reads its input. */
export const CUSTOM_TOOL_INPUT = 'input';

/** Tries to bind one Baton tool onto an agent tool by its argument names; null when a required argument is missing. */
function bindArgs(tool: WriterToolName, agent: AgentTool): Record<string, string> | null {
  const args: Record<string, string> = {};
  for (const batonArg of WRITER_TOOL_ARGS[tool]) {
    const hit = (ARG_HINTS[batonArg] ?? [batonArg]).find((h) => agent.properties.includes(h) && args[h] === undefined);
    if (hit !== undefined) args[hit] = batonArg;
    else if (REQUIRED[tool].includes(batonArg)) return null;
  }
  return args;
}

/**
 * Builds the map from the agent's `writer_tools` declaration (PROTOCOL `open`), then detects the Baton tools it did
 * not declare from the agent's tool schemas (common names such as `read_file` / `Write` / `str_replace`, argument
 * names such as `path` / `file_path` / `filePath`). Declared agent tool names must exist among the agent's tools.
 */
export function resolveToolMap(declared: Declared | null, tools: readonly unknown[] | null): ResolvedToolMap {
  const agentTools = agentToolsOf(tools);
  const agentNames = new Set(agentTools.map((t) => t.name));
  const map = new Map<string, ToolBinding>();
  const bound = new Set<WriterToolName>();
  for (const [batonName, decl] of Object.entries(declared ?? {})) {
    if (decl === undefined || !(WRITER_TOOLS as readonly string[]).includes(batonName)) continue;
    if (tools !== null && !agentNames.has(decl.name)) continue;
    const args: Record<string, string> = {};
    for (const [batonArg, agentArg] of Object.entries(decl.args ?? {})) if (agentArg !== undefined) args[agentArg] = batonArg;
    map.set(decl.name, { tool: batonName as WriterToolName, args });
    bound.add(batonName as WriterToolName);
  }
  for (const tool of WRITER_TOOLS) {
    // The writer's shell is for agents that read files through theirs (Codex): an agent with a read tool keeps its
    // shell out of the writer's reach, as any other tool Baton does not implement.
    if (bound.has(tool) || (tool === 'shell' && bound.has('read'))) continue;
    for (const agent of agentTools) {
      if (map.has(agent.name) || !NAME_HINTS[tool].includes(norm(agent.name))) continue;
      const args = bindArgs(tool, agent);
      if (args === null) continue;
      map.set(agent.name, { tool, args });
      bound.add(tool);
      break;
    }
  }
  const canWrite = [...map.values()].some((b) => b.tool === 'write' || b.tool === 'edit' || b.tool === 'apply_patch');
  if (canWrite) return { map, forkPossible: true, reason: null };
  const why = declared === null ? 'the agent declared no writer_tools and' : 'with the declared writer_tools';
  return { map, forkPossible: false, reason: `${why} no writing tool (write, edit or apply_patch) maps onto the agent's tools` };
}

/** Baton's own tool definitions, used in delta mode, in the shape of the session's API. */
export function batonToolDefinitions(api: ProviderApi = 'openai-chat'): object[] {
  const str = { type: 'string' } as const;
  const fn = (name: string, description: string, properties: Record<string, object>, required: string[]): object => {
    const parameters = { type: 'object', properties, required, additionalProperties: false };
    switch (api) {
      case 'openai-chat':
        return { type: 'function', function: { name, description, parameters } };
      case 'openai-responses':
        return { type: 'function', name, description, parameters };
      case 'anthropic-messages':
        return { name, description, input_schema: parameters };
    }
  };
  return [
    fn('read', 'Read a memory file (absolute path).', { path: str, offset: { type: 'integer' }, limit: { type: 'integer' } }, ['path']),
    fn('write', 'Write a whole memory file (absolute path).', { path: str, content: str }, ['path', 'content']),
    fn('edit', 'Replace old_string with new_string in a memory file.', { path: str, old_string: str, new_string: str, replace_all: { type: 'boolean' } }, ['path', 'old_string', 'new_string']),
    fn('apply_patch', 'Apply a patch (*** Begin Patch / *** Update File: <path> / @@ / -old / +new / *** End Patch) to memory files.', { patch: str }, ['patch']),
    fn('glob', 'List memory files matching a glob pattern.', { pattern: str, path: str }, ['pattern']),
    fn('grep', 'Search memory files with a regular expression.', { pattern: str, path: str, include: str }, ['pattern']),
    fn('task', "List the parent session's task tree.", { operation: { type: 'string', enum: ['list'] } }, ['operation']),
  ];
}
