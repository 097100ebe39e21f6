import type { Budgets } from './budgets.ts';
import { checkCheckpoint } from './checkpoint-rules.ts';
import { checkMemory } from './memory-rules.ts';
import { defaultTokenCounter, type TokenCounter } from '../tokens/token-counter.ts';
import type { Violation } from './violation.ts';

/**
 * The validator a writer's files go through after every writer turn: it
 * checks the files the **current** templates ask for, measures budgets in real tokens, and knows the previous
 * committed MEMORY.md so that duplicate titles are caught. Pure: the caller reads the files (the staged copies)
 * and answers the spillover questions; nothing here touches the disk.
 */

/** Input of {@link validateMemoryFiles}. */
export interface ValidateMemoryFilesInput {
  /** Absolute path of checkpoint.md (named in violations). */
  readonly checkpointPath: string;
  /** Text of checkpoint.md, or null when it does not exist. */
  readonly checkpoint: string | null;
  /** Absolute path of the project's MEMORY.md (named in violations). */
  readonly memoryPath: string;
  /** Text of MEMORY.md, or null when it does not exist. */
  readonly memory: string | null;
  /** The last committed MEMORY.md, or null when there is none (duplicate titles are judged against it). */
  readonly previousMemory: string | null;
  /** The checkpoint template (`loadPrompt('checkpoint-template')`). */
  readonly template: string;
  /** The MEMORY.md template (`loadPrompt('memory-template')`). */
  readonly memoryTemplate: string;
  /** Whether the session has at least one user request: §1 must then hold a block quote. */
  readonly userRequestExists: boolean;
  /**
   * Whether a spillover exists. Called with the bare file name an index line gives, only for valid names:
   * `checkpoint-<topic>.md` (beside checkpoint.md) or `MEMORY-<topic>.md` (beside MEMORY.md).
   */
  readonly spilloverExists: (fileName: string) => boolean;
  /**
   * Text of an existing spillover (same names as `spilloverExists`), or null. When given, every spillover an index
   * line points at is checked with `validateSpillover` (no nested spillover); when omitted, the caller checks
   * spillovers itself.
   */
  readonly readSpillover?: ((fileName: string) => string | null) | undefined;
  /** Budgets (`resolveBudgets(config)`, or `DEFAULT_BUDGETS`). */
  readonly budgets: Budgets;
  /** Token counter; default the shared o200k_base one. */
  readonly counter?: TokenCounter | undefined;
}

/**
 * Validates checkpoint.md and MEMORY.md. Returns every violation, checkpoint first, each file's in rule order:
 * structure, content rules, index lines and spillovers, budgets. An empty array means the files are fine; pass the
 * result to `decideValidation` for the next step.
 *
 * A checkpoint filled as the template asks — title, headers and italic lines untouched, bodies replaced, §1
 * quoting the user, sections within budget — produces no violation.
 */
export function validateMemoryFiles(input: ValidateMemoryFilesInput): Violation[] {
  const counter = input.counter ?? defaultTokenCounter;
  return [
    ...checkCheckpoint({
      file: input.checkpointPath,
      text: input.checkpoint,
      template: input.template,
      userRequestExists: input.userRequestExists,
      spilloverExists: input.spilloverExists,
      readSpillover: input.readSpillover,
      budgets: input.budgets,
      counter,
    }),
    ...checkMemory({
      file: input.memoryPath,
      text: input.memory,
      previous: input.previousMemory,
      template: input.memoryTemplate,
      spilloverExists: input.spilloverExists,
      readSpillover: input.readSpillover,
      budgets: input.budgets,
      counter,
    }),
  ];
}
