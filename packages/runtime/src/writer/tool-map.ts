/**
 * Maps Baton's writer tools onto the agent's own tools for fork mode (SPEC §2.3): the request must carry the agent's
 * tool definitions unchanged, so the writer calls the agent's names and Baton runs its sandboxed implementation.
 */

export const WRITER_TOOLS = ['read', 'write', 'edit', 'apply_patch', 'glob', 'grep', 'task'] as const;
export type WriterToolName = (typeof WRITER_TOOLS)[number];

/** Baton's argument names per tool. */
export const WRITER_TOOL_ARGS: Readonly<Record<WriterToolName, readonly string[]>> = {
  read: ['path', 'offset', 'limit'],
  write: ['path', 'content'],
  edit: ['path', 'old_string', 'new_string', 'replace_all'],
  apply_patch: ['patch'],
  glob: ['pattern', 'path'],
  grep: ['pattern', 'path', 'include'],
  task: ['operation'],
};

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

type Declared = Readonly<Record<string, { name: string; args?: Readonly<Record<string, string>> }>>;

/**
 * Builds the map from the agent's `writer_tools` declaration (PROTOCOL `open`). Declared agent tool names must exist
 * among the agent's tool definitions when those are given.
 */
export function resolveToolMap(declared: Declared | null, tools: readonly unknown[] | null): ResolvedToolMap {
  if (declared === null) return { map: new Map(), forkPossible: false, reason: 'the agent declared no writer_tools' };
  const agentNames = new Set(
    (tools ?? []).flatMap((t) => {
      const name = (t as { function?: { name?: unknown }; name?: unknown }).function?.name ?? (t as { name?: unknown }).name;
      return typeof name === 'string' ? [name] : [];
    }),
  );
  const map = new Map<string, ToolBinding>();
  for (const [batonName, decl] of Object.entries(declared)) {
    if (!(WRITER_TOOLS as readonly string[]).includes(batonName)) continue;
    if (tools !== null && !agentNames.has(decl.name)) continue;
    const args: Record<string, string> = {};
    for (const [batonArg, agentArg] of Object.entries(decl.args ?? {})) args[agentArg] = batonArg;
    map.set(decl.name, { tool: batonName as WriterToolName, args });
  }
  const canWrite = [...map.values()].some((b) => b.tool === 'write' || b.tool === 'edit' || b.tool === 'apply_patch');
  return canWrite
    ? { map, forkPossible: true, reason: null }
    : { map, forkPossible: false, reason: 'no writing tool (write, edit or apply_patch) maps onto the agent tools' };
}

/** Baton's own tool definitions, used in delta mode. */
export function batonToolDefinitions(): object[] {
  const str = { type: 'string' } as const;
  const fn = (name: string, description: string, properties: Record<string, object>, required: string[]) => ({
    type: 'function',
    function: { name, description, parameters: { type: 'object', properties, required, additionalProperties: false } },
  });
  return [
    fn('read', 'Read a memory file (absolute path).', { path: str, offset: { type: 'integer' }, limit: { type: 'integer' } }, ['path']),
    fn('write', 'Write a whole memory file (absolute path).', { path: str, content: str }, ['path', 'content']),
    fn('edit', 'Replace old_string with new_string in a memory file.', { path: str, old_string: str, new_string: str, replace_all: { type: 'boolean' } }, ['path', 'old_string', 'new_string']),
    fn('task', "List the parent session's task tree.", { operation: { type: 'string', enum: ['list'] } }, ['operation']),
  ];
}
