import { join } from 'node:path';
import type { BatonClient } from '@baton/client';
import type { ScriptAction } from './script-player.ts';
import { moduleSource } from './claude-task.ts';

/**
 * One task on a scratch "depot" project passed from agent to agent: pi (chat completions) does its first half, Codex
 * (Responses) continues from a handoff URL, Claude Code (Anthropic Messages) finishes from Codex's session. Three
 * facts only pi ever sees — a file it writes, an error its command prints, a decision it states — must reach the
 * agents after it through the handoffs, not through their own prompts or tools.
 */

/** The file pi writes (its path appears in pi's tool call only: no prompt names it, no later agent touches it). */
export const FACT_PATH = 'src/rates/bay7.json';
/** The error pi's command prints (only in pi's tool output). */
export const FACT_ERROR = 'ledger drift: 3 pallets unaccounted in bay 7';
/** The decision pi states (only in pi's answer). */
export const FACT_DECISION = 'keep quantities as integer pallet counts instead of fractional loads';

export const PI_PROMPTS = [
  'Start the depot ledger: write src/ledger.ts, then run the opening-balance check with node.',
  'Record the bay rates in a JSON file under src/rates and stop there: another agent will write the report.',
] as const;
export const PI_START = [0, 3] as const;

export const LEDGER = moduleSource('ledger', 40, 'handoff chain');
export const RATES = '{ "bay": 7, "rate_cents": 1250 }\n';

export const PI_SCRIPT: readonly ScriptAction[] = [
  { tool: 'write', args: { path: 'src/ledger.ts', content: LEDGER } },
  { tool: 'bash', args: { command: `node -e "throw new Error('${FACT_ERROR}')"` } },
  { text: `The opening balance does not reconcile: the check failed with a drift in bay 7. We decided to ${FACT_DECISION}.` },
  { tool: 'write', args: { path: FACT_PATH, content: RATES } },
  { text: 'Recorded the bay rates. Next: the reconciliation report, for the next agent.' },
];

export const CODEX_PROMPTS = ['Continue the depot task from where the other agent stopped: add src/report.ts with the reconciliation report.'] as const;
export const REPORT = "// The depot reconciliation report.\nexport const DRIFT = 0;\nexport const TITLE = 'Depot reconciliation';\n";
const addFile = (path: string, content: string): string => `*** Begin Patch\n*** Add File: ${path}\n${content.replace(/\n$/, '').replace(/^/gm, '+')}\n*** End Patch\n`;

export const CODEX_SCRIPT: readonly ScriptAction[] = [
  { tool: 'apply_patch', args: addFile('src/report.ts', REPORT), kind: 'custom' },
  { tool: 'exec_command', args: { cmd: 'cat src/report.ts' } },
  { text: 'Added src/report.ts with the reconciliation report; its drift is still a placeholder.' },
];

export const CLAUDE_CHAIN_PROMPTS = ['Finish the depot task: put the drift the first agent found into the report with an edit, then grep for it.'] as const;
export const FINAL_REPORT = REPORT.replace('export const DRIFT = 0;', 'export const DRIFT = 3; // pallets unaccounted in bay 7');

export function claudeChainScript(project: string): readonly ScriptAction[] {
  const report = join(project, 'src/report.ts');
  return [
    { tool: 'Read', args: { file_path: report } },
    { tool: 'Edit', args: { file_path: report, old_string: 'export const DRIFT = 0;', new_string: 'export const DRIFT = 3; // pallets unaccounted in bay 7' } },
    { tool: 'Grep', args: { pattern: 'DRIFT', path: join(project, 'src'), output_mode: 'content' } },
    { text: 'The report now carries the bay 7 drift of 3 pallets; the depot task is done.' },
  ];
}

/** Waits until no session of the daemon has a writer running or queued (the sessions of a handoff chain included). */
export async function allWritersIdle(client: BatonClient, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const listed = await client.runtimeSessions().catch(() => null);
    if (listed !== null && listed.sessions.every((s) => s.state === null || s.state.writer === 'idle')) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`a writer did not settle within ${ms} ms`);
}
