/** The memory store: the files writers edit, their staged commits and history, validation, and the rebuild render. */

// Errors and paths
export { MemoryStoreError, type MemoryStoreErrorCode } from './memory-errors.ts';
export { MEMORY_ID_PATTERN, memoryPaths, type MemoryPaths } from './memory-paths.ts';

// Templates: prompts, checkpoint sections, bootstrap
export { loadPrompt, renderPrompt } from './templates/prompt-registry.ts';
export { fillLabel, loadPromptLabels } from './templates/prompt-labels.ts';
export { checkCheckpointStructure, parseSections } from './templates/checkpoint-sections.ts';
export { bootstrapMemory, migrateLegacyMemory } from './templates/bootstrap.ts';

// Commit: staged commits, the journal port, content-addressed history
export { commitFiles, committedPaths, fileVersions, recoverCommits, unappliedCommits, type FileVersion } from './commit/staged-commit.ts';
export type { CommitEntry, CommitEntryType, CommitJournal, CommitRecord } from './commit/commit-journal.ts';
export { HistoryStore, contentHash } from './commit/history-store.ts';
export { writeFileAtomic } from './commit/atomic-file.ts';

// Sandbox: the writer's file tools and progress reconciliation
export { createWriterFiles, type WriterFiles } from './sandbox/writer-files.ts';
export { diffProgress, renderProgressBlock } from './sandbox/progress-reconcile.ts';

// Tokens
export { TokenCounter, defaultTokenCounter, countTokensOnce } from './tokens/token-counter.ts';

// Validator: budgets, validation and its reflections
export { CHECKPOINT_BUDGET_KEYS, DEFAULT_BUDGETS, renderBudgetTable, resolveBudgets, type Budgets } from './validator/budgets.ts';
export { validateMemoryFiles, type ValidateMemoryFilesInput } from './validator/validator.ts';
export { decideValidation, type Violation } from './validator/violation.ts';
export { renderExtractionReflection, renderValidationReflection } from './validator/reflection.ts';

// Rebuild: caps, the rebuilt context, extractive summaries
export { DEFAULT_REBUILD_CAPS, REBUILD_CAP_KEYS, resolveRebuildCaps, scaleRebuildCaps, type RebuildCaps } from './rebuild/rebuild-caps.ts';
export { selectRecentUserInput, type RecentUserMessage } from './rebuild/recent-user-input.ts';
export { truncateHeadTail } from './tokens/head-tail-truncate.ts';
export { renderRebuildContext, type RebuildContextInput } from './rebuild/rebuild-context.ts';
export { extractiveSummary } from './rebuild/extractive-summary.ts';
export type { ChatMessageLike } from './rebuild/message-parts.ts';
