import { join } from 'node:path';
import type { ScriptAction } from './script-player.ts';

/**
 * Claude Code's scripted task on a scratch "depot" project: two prompts (the second in a resumed process), ten model
 * steps with Claude Code's own tools — Write, Read, Bash, Edit, Glob and Grep — and the files they leave.
 */

export const CLAUDE_PROMPTS = [
  'Set up the depot project: write src/stock.ts and src/ledger.ts, read the stock module back, then count the lines with Bash.',
  'Retitle the stock report with an edit, find every module with Glob, then grep the sources for TITLE.',
] as const;
export const CLAUDE_START = [0, 5] as const;

const WORDS = ['crate', 'dock', 'bay', 'forklift', 'manifest', 'tally', 'lot', 'vendor', 'aisle', 'rack'];

/** A deterministic TypeScript module of `lines` functions (about 40 tokens a line). */
export function moduleSource(name: string, lines: number, tag: string): string {
  const out = [`// ${name}: generated for the ${tag} end-to-end test`, `export const MODULE = '${name}';`];
  for (let i = 0; i < lines; i++) {
    const a = WORDS[i % WORDS.length] as string;
    const b = WORDS[(i * 7 + name.length) % WORDS.length] as string;
    out.push(`export function ${name}${a[0]?.toUpperCase()}${a.slice(1)}${i}(items: readonly number[]): number { /* ${b} rule ${i} of ${name} */ return items.reduce((s, x) => s + x * ${i + 1}, ${i % 5}); }`);
  }
  return `${out.join('\n')}\n`;
}

export const CLAUDE_SOURCES = {
  stock: `${moduleSource('stock', 120, 'Claude Code')}export const TITLE = 'Stock report';\n`,
  ledger: moduleSource('ledger', 60, 'Claude Code'),
};
/** `src/stock.ts` after the task's edit. */
export const EDITED_STOCK = CLAUDE_SOURCES.stock.replace("'Stock report'", "'Depot stock report'");

/** The model's steps; Claude Code's file tools take absolute paths, so the script is made for one project directory. */
export function claudeScript(project: string): readonly ScriptAction[] {
  const at = (path: string): string => join(project, path);
  return [
    { tool: 'Write', args: { file_path: at('src/stock.ts'), content: CLAUDE_SOURCES.stock } },
    { tool: 'Write', args: { file_path: at('src/ledger.ts'), content: CLAUDE_SOURCES.ledger } },
    { tool: 'Read', args: { file_path: at('src/stock.ts') } },
    { tool: 'Bash', args: { command: 'wc -l src/*.ts', description: 'Count the lines of the modules' } },
    { text: 'Wrote src/stock.ts and src/ledger.ts (123 and 62 lines); the stock module reads back as written.' },
    { tool: 'Read', args: { file_path: at('src/stock.ts') } },
    { tool: 'Edit', args: { file_path: at('src/stock.ts'), old_string: "'Stock report'", new_string: "'Depot stock report'" } },
    { tool: 'Glob', args: { pattern: 'src/**/*.ts' } },
    { tool: 'Grep', args: { pattern: 'TITLE', path: at('src'), output_mode: 'content' } },
    { text: 'The stock report is now titled "Depot stock report"; the project has src/stock.ts and src/ledger.ts.' },
  ];
}
