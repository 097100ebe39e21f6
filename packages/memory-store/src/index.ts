export { MemoryStoreError, errnoCode } from './memory-errors.ts';
export type { MemoryStoreErrorCode, MemoryStoreErrorData } from './memory-errors.ts';
export { MEMORY_ID_PATTERN, memoryPaths } from './memory-paths.ts';
export type { MemoryIds, MemoryPaths } from './memory-paths.ts';
export { PROMPT_NAMES, loadPrompt, promptPlaceholders, renderPrompt } from './templates/prompt-registry.ts';
export type { PromptName } from './templates/prompt-registry.ts';
export { CHECKPOINT_SECTIONS, checkCheckpointStructure, parseSections } from './templates/checkpoint-sections.ts';
export type { CheckpointSectionSpec, ParsedSection, StructureCheck, StructureIssue, StructureIssueKind } from './templates/checkpoint-sections.ts';
export { bootstrapMemory, migrateLegacyMemory } from './templates/bootstrap.ts';
export type { BootstrapResult } from './templates/bootstrap.ts';
export { canonicalPath } from './canonical-path.ts';
export { createWriterFiles } from './sandbox/writer-files.ts';
export type { EditResult, WriterReadOptions, WriteResult, WriterFiles } from './sandbox/writer-files.ts';
export { writeFileAtomic, syncDir } from './commit/atomic-file.ts';
export { HistoryStore, contentHash } from './commit/history-store.ts';
export { MemoryCommitJournal } from './commit/commit-journal.ts';
export type { CommitJournal, CommitRecord, CommitEntry, CommitEntryType, CommittedFile } from './commit/commit-journal.ts';
export { commitFiles, recoverCommits, unappliedCommits, fileVersions, committedPaths, liveMatchesHistory } from './commit/staged-commit.ts';
export type { CommitOptions, CommitStep, FileVersion } from './commit/staged-commit.ts';
export { TOKEN_ENCODINGS, TokenCounter, defaultTokenCounter } from './tokens/token-counter.ts';
export type { TokenCounterOptions, TokenCounterStats, TokenEncoding } from './tokens/token-counter.ts';
export {
  BudgetConfigSchema,
  CHECKPOINT_BUDGET_KEYS,
  DEFAULT_BUDGETS,
  MEMORY_BUDGET_KEYS,
  renderBudgetTable,
  resolveBudgets,
} from './validator/budgets.ts';
export type { BudgetConfig, Budgets, CheckpointBudgetKey, FileBudget, MemoryBudgetKey } from './validator/budgets.ts';
export { decideValidation } from './validator/violation.ts';
export type { ValidationDecision, Violation, ViolationRule, ViolationSeverity } from './validator/violation.ts';
export { validateMemoryFiles } from './validator/validator.ts';
export type { ValidateMemoryFilesInput } from './validator/validator.ts';
export {
  INDEX_LINE_PATTERN,
  SPILLOVER_PREFIX,
  SPILLOVER_TOPIC_MAX_CHARS,
  isIndexLine,
  parseIndexLines,
  parseSpilloverName,
  validateSpillover,
} from './validator/index-lines.ts';
export type { IndexLine, SpilloverOwner } from './validator/index-lines.ts';
export { DISCOVERED_SECTION_TITLE, parseDiscoveredEntries } from './validator/memory-entries.ts';
export type { MemoryEntry } from './validator/memory-entries.ts';
export { renderExtractionReflection, renderValidationReflection } from './validator/reflection.ts';
export type { ReflectionPaths } from './validator/reflection.ts';
export { checkMemoryWrite, confineToMemoryRoot } from './sandbox/write-guard.ts';
export type { ConfinedTarget, GuardDecision, MemoryWriteRequest } from './sandbox/write-guard.ts';
export { MAX_TASK_DEPTH, TASK_ID_PATTERN, actorLabel, allowedWritePaths, evaluateWriteRules } from './sandbox/write-rules.ts';
export type { MemoryActor, RuleVerdict, WriteRule } from './sandbox/write-rules.ts';
export type { WriterFilesOptions } from './sandbox/writer-files.ts';
export { GLOB_LIMIT, compileGlob, expandBraces, globFiles, listFiles, splitGlobBase } from './sandbox/glob.ts';
export type { GlobOptions, GlobResult } from './sandbox/glob.ts';
export { GREP_LIMIT, GREP_LINE_CHARS, compileGrepPattern, grepFiles } from './sandbox/grep.ts';
export type { GrepResult } from './sandbox/grep.ts';
export { applyChunks, parsePatch } from './sandbox/apply-patch.ts';
export type { PatchChunk, PatchOperation } from './sandbox/apply-patch.ts';
export { applyPatchTransaction } from './sandbox/apply-patch-transaction.ts';
export type { ApplyPatchResult, PatchChange, PatchFileSystem } from './sandbox/apply-patch-transaction.ts';
export { SECTION_CUT_MARKER, TRUNCATION_MARKER, readBudgeted, readSectionAware } from './tokens/budgeted-read.ts';
export type { TokenCount } from './tokens/budgeted-read.ts';
export {
  diffProgress,
  parseReconcileMarkers,
  parseWrittenAt,
  renderProgressBlock,
  stampWrittenAt,
} from './sandbox/progress-reconcile.ts';
export type { DiffProgressOptions, ProgressItem } from './sandbox/progress-reconcile.ts';
export { DEFAULT_REBUILD_CAPS, REBUILD_CAP_KEYS, RebuildCapsConfigSchema, resolveRebuildCaps } from './rebuild/rebuild-caps.ts';
export type { RebuildCapKey, RebuildCaps, RebuildCapsConfig } from './rebuild/rebuild-caps.ts';
export { REBUILD_SECTION_NAMES, REBUILD_SECTION_SEPARATOR, renderRebuildContext } from './rebuild/rebuild-context.ts';
export type { ActiveWriter, RebuildContextInput, RebuildSection, RebuildSectionName, RenderedRebuildContext } from './rebuild/rebuild-context.ts';
export { renderCheckpointIndex } from './rebuild/checkpoint-index.ts';
export { renderTailReminder } from './rebuild/rebuild-tail-reminder.ts';
export type { LastMessageInfo } from './rebuild/rebuild-tail-reminder.ts';
export { RECENT_USER_SEPARATOR, selectRecentUserInput } from './rebuild/recent-user-input.ts';
export type { RecentUserBudget, RecentUserEntry, RecentUserMessage } from './rebuild/recent-user-input.ts';
export { renderTasksLedger } from './rebuild/tasks-ledger.ts';
export type { RebuildTask, RebuildTaskStatus } from './rebuild/tasks-ledger.ts';
export { isPushedMemoryKey, memoryKeysToList } from './rebuild/memory-keys-index.ts';
export { prefixWithin, suffixWithin, truncateHeadTail } from './tokens/head-tail-truncate.ts';
export type { HeadTailCut } from './tokens/head-tail-truncate.ts';
export { DEFAULT_EXTRACTIVE_SUMMARY_CAP, extractiveSummary } from './rebuild/extractive-summary.ts';
export type { ExtractiveSummaryOptions } from './rebuild/extractive-summary.ts';
export type { ChatMessageLike } from './rebuild/message-parts.ts';
