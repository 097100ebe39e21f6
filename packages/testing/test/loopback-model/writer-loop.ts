import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';

/** How the test's tiny tool executor maps tool names to file operations. */
export interface LoopToolNames {
  readonly read: { readonly name: string; readonly pathArg: string };
  readonly write: { readonly name: string; readonly pathArg: string; readonly contentArg: string };
  /** Prefix each line of read results with `cat -n`-style numbers, like some coding agents' read tools. */
  readonly numberLines?: boolean;
}

/** One model turn of the loop: the tool calls it made (name + parsed arguments) or its final text. */
export interface LoopTurn {
  readonly calls: readonly { readonly name: string; readonly args: Record<string, unknown> }[];
  readonly content: string | null;
  readonly finishReason: string;
}

function numbered(text: string): string {
  return text
    .split('\n')
    .map((line, i) => `${String(i + 1).padStart(6)}\t${line}`)
    .join('\n');
}

/** Runs one tool call of the writer against the file system, like an agent would. */
export async function execute(names: LoopToolNames, name: string, args: Record<string, unknown>): Promise<string> {
  if (name === names.read.name) {
    const path = String(args[names.read.pathArg]);
    try {
      const text = await readFile(path, 'utf8');
      return names.numberLines === true ? numbered(text) : text;
    } catch (err) {
      return `Error: cannot read ${path}: ${(err as Error).message}`;
    }
  }
  if (name === names.write.name) {
    const path = String(args[names.write.pathArg]);
    const content = String(args[names.write.contentArg]);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, content);
    return `Wrote ${content.length} characters to ${path}`;
  }
  return `Tool not permitted: ${name}`;
}

/**
 * Drives a writer run like a real agent loop: calls the model, executes its tool calls against the file system,
 * appends the results, until the model stops without tool calls (or `maxTurns`). Mutates `messages`.
 */
export async function runWriterLoop(
  client: OpenAI,
  messages: ChatCompletionMessageParam[],
  tools: ChatCompletionTool[],
  names: LoopToolNames,
  maxTurns = 8,
): Promise<LoopTurn[]> {
  const turns: LoopTurn[] = [];
  for (let turn = 0; turn < maxTurns; turn++) {
    const res = await client.chat.completions.create({ model: 'loopback', messages, tools });
    const choice = res.choices[0];
    if (choice === undefined) throw new Error('no choice');
    const calls = (choice.message.tool_calls ?? []).flatMap((c) => (c.type === 'function' ? [c] : []));
    messages.push(choice.message);
    turns.push({
      calls: calls.map((c) => ({ name: c.function.name, args: JSON.parse(c.function.arguments) as Record<string, unknown> })),
      content: choice.message.content,
      finishReason: choice.finish_reason,
    });
    if (calls.length === 0) return turns;
    for (const call of calls) {
      const args = JSON.parse(call.function.arguments) as Record<string, unknown>;
      messages.push({ role: 'tool', tool_call_id: call.id, content: await execute(names, call.function.name, args) });
    }
  }
  throw new Error(`writer loop did not finish in ${maxTurns} turns`);
}
