import { parseToolArguments } from '../chat-request.ts';
import type { ConversationTool, ConversationToolCall } from '../conversation-view.ts';
import type { RecordedRequest, ToolCallSpec } from '../types.ts';

/**
 * Tools of agents that read files through a shell and write them with patches — Codex: a function tool
 * `exec_command {cmd}` and the free-form (custom) tool `apply_patch`. The fake writer reads with `cat <path>` and
 * writes with an `*** Begin Patch` patch: `*** Add File:` for a file it could not read, else `*** Update File:` with
 * one hunk that replaces every line (the memory files may be changed in place but not deleted).
 */
export interface ShellPatchTools {
  readonly shell: { readonly name: string; readonly commandArg: string };
  /** `inputArg` undefined: a custom tool, whose call is its raw input; else a function tool's argument. */
  readonly patch: { readonly name: string; readonly inputArg: string | undefined };
}

const SHELL_NAME = /^(exec_?command|exec|shell|bash|run_?command|run_?shell_?command|terminal)$/i;
const COMMAND_ARGS = ['cmd', 'command', 'script'] as const;
const PATCH_NAME = /patch/i;
const PATCH_ARGS = ['input', 'patch', 'patch_text', 'diff'] as const;

interface Schema {
  readonly properties: readonly string[];
  readonly required: readonly string[];
}

function schemaOf(tool: ConversationTool): Schema {
  const params = tool.parameters;
  const properties = params?.['properties'];
  const required = params?.['required'];
  return {
    properties: typeof properties === 'object' && properties !== null ? Object.keys(properties) : [],
    required: Array.isArray(required) ? required.filter((r): r is string => typeof r === 'string') : [],
  };
}

/** The one argument a function tool is called with, when it has it and needs no other. */
function soleArgument(tool: ConversationTool, candidates: readonly string[]): string | undefined {
  const schema = schemaOf(tool);
  const arg = candidates.find((a) => schema.properties.includes(a));
  return arg !== undefined && schema.required.every((r) => r === arg) ? arg : undefined;
}

/** Names of the request's custom (free-form) tools; only the Responses API has them. */
function customToolNames(request: RecordedRequest): string[] {
  if (request.api !== 'openai-responses') return [];
  return (request.wire.tools ?? []).flatMap((t) => (t.type === 'custom' && typeof t.name === 'string' ? [t.name] : []));
}

/** A shell tool and a patch tool of the request, when it offers both. */
export function pickShellPatchTools(request: RecordedRequest): ShellPatchTools | undefined {
  const tools = request.conversation.tools;
  let shell: ShellPatchTools['shell'] | undefined;
  for (const tool of tools) {
    const commandArg = SHELL_NAME.test(tool.name) ? soleArgument(tool, COMMAND_ARGS) : undefined;
    if (commandArg !== undefined) {
      shell = { name: tool.name, commandArg };
      break;
    }
  }
  const custom = customToolNames(request).find((name) => PATCH_NAME.test(name));
  let patch: ShellPatchTools['patch'] | undefined = custom === undefined ? undefined : { name: custom, inputArg: undefined };
  for (const tool of tools) {
    if (patch !== undefined) break;
    const inputArg = PATCH_NAME.test(tool.name) ? soleArgument(tool, PATCH_ARGS) : undefined;
    if (inputArg !== undefined) patch = { name: tool.name, inputArg };
  }
  return shell === undefined || patch === undefined ? undefined : { shell, patch };
}

const quote = (path: string): string => (/^[\w./@%+:=-]+$/.test(path) ? path : `'${path.replaceAll("'", "'\\''")}'`);

/** A shell call that prints one file. */
export function catCall(tools: ShellPatchTools, path: string): ToolCallSpec {
  return { name: tools.shell.name, arguments: { [tools.shell.commandArg]: `cat ${quote(path)}` } };
}

/** A patch tool call carrying `patch`. */
export function patchCall(tools: ShellPatchTools, patch: string): ToolCallSpec {
  const { name, inputArg } = tools.patch;
  return inputArg === undefined ? { name, arguments: patch, kind: 'custom' } : { name, arguments: { [inputArg]: patch } };
}

const fileLines = (text: string): string[] => {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines;
};

/**
 * A patch that makes `path` hold `next`: an added file when `previous` is undefined (it does not exist), else one
 * hunk removing each of its lines and adding each new one.
 */
export function wholeFilePatch(path: string, previous: string | undefined, next: string): string {
  const added = fileLines(next).map((l) => `+${l}`);
  const body = previous === undefined ? [`*** Add File: ${path}`, ...added] : [`*** Update File: ${path}`, '@@', ...fileLines(previous).map((l) => `-${l}`), ...added];
  return ['*** Begin Patch', ...body, '*** End Patch', ''].join('\n');
}

/** What a call of an earlier turn did with the files: the paths it printed, and the contents it patched in. */
export interface FileEffects {
  readonly reads: readonly string[];
  readonly writes: ReadonlyMap<string, string>;
}

const NO_EFFECTS: FileEffects = { reads: [], writes: new Map() };

/** The path a plain `cat <path>` prints (quotes removed), else undefined. */
function catPath(command: string): string | undefined {
  const match = /^\s*cat\s+('([^']*)'|"([^"]*)"|(\S+))\s*$/.exec(command);
  return match === null ? undefined : (match[2] ?? match[3] ?? match[4]);
}

/**
 * The files each section of a patch adds or updates, with the text of its `+` lines (for a patch of this writer, the
 * file's whole new content).
 */
export function patchedFiles(patch: string): Map<string, string> {
  const out = new Map<string, string[]>();
  let current: string[] | undefined;
  for (const raw of patch.split('\n')) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    const header = /^\*\*\* (?:Add|Update) File: (.+)$/.exec(line);
    if (header !== null) {
      current = [];
      out.set((header[1] as string).trim(), current);
    } else if (line.startsWith('*** ')) current = undefined;
    else if (current !== undefined && line.startsWith('+')) current.push(line.slice(1));
  }
  return new Map([...out].map(([path, lines]) => [path, lines.map((l) => `${l}\n`).join('')]));
}

/** What `call` (a shell or patch call of the conversation) did to the files. */
export function fileEffects(tools: ShellPatchTools, call: ConversationToolCall): FileEffects {
  if (call.name === tools.shell.name) {
    const command = parseToolArguments(call.arguments)[tools.shell.commandArg];
    const path = typeof command === 'string' ? catPath(command) : undefined;
    return path === undefined ? NO_EFFECTS : { reads: [path], writes: new Map() };
  }
  if (call.name === tools.patch.name) {
    const arg = tools.patch.inputArg ?? 'input';
    const parsed = parseToolArguments(call.arguments)[arg];
    return { reads: [], writes: patchedFiles(typeof parsed === 'string' ? parsed : call.arguments) };
  }
  return NO_EFFECTS;
}

/** A shell result's text, or undefined when the command failed (the file could not be read). */
export function shellOutput(output: string): string | undefined {
  return /^(Error|error)\b/.test(output) ? undefined : output;
}
