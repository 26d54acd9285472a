/**
 * openwork-tools: the tool runtime a coding agent hands to its model.
 *
 * Seven tools (`read`, `write`, `edit`, `grep`, `glob`, `list`, `bash`)
 * behind a typed contract; a path boundary that no symbolic link or `..`
 * crosses; processes that always end as a whole group; bounded output; and
 * file-change artifacts that can be undone.
 *
 * @example
 * ```ts
 * import { createSession, finalizeToolset, undoFileChanges } from "@openwork/tools";
 *
 * const session = await createSession({ workingDirectory: Deno.cwd() });
 * const toolset = finalizeToolset({ session });
 * const turn = new AbortController();
 * const result = await toolset.call({
 *   name: "edit",
 *   input: { path: "README.md", old_text: "TODO", new_text: "DONE" },
 *   callId: "call-1",
 *   signal: turn.signal,
 *   // Asked for every call the policy does not allow outright; without it those are denied.
 *   approve: ({ prepared }) => Promise.resolve(confirm(`Allow ${prepared.name}?`)),
 * });
 * console.log(result.output);
 * await undoFileChanges(session, result.artifacts);
 * ```
 *
 * @module
 */

export { createSession } from "./src/session.ts";
export type { SessionOptions } from "./src/session.ts";
export type { ProcessEnding } from "./src/backends/pid_namespace/choose.ts";
export { UnsupportedPlatformError } from "./src/runtime/platform.ts";
export { SandboxUnavailableError } from "./src/runtime/sandbox.ts";
export type { SandboxOptions, SandboxProblem } from "./src/runtime/sandbox.ts";
export { finalizeToolset } from "./src/finalize.ts";
export { undoFileChanges } from "./src/artifacts/undo.ts";
export type { UndoOutcome, UndoReport } from "./src/artifacts/undo.ts";

export { defineTool } from "./src/contract/tool.ts";
export type { AnyTool, Tool, ToolOutput, ToolSpec } from "./src/contract/tool.ts";
export { ToolRegistry } from "./src/contract/registry.ts";
export type { Registered } from "./src/contract/registry.ts";
export type {
  ApprovalRequest,
  CallData,
  CallInput,
  CallName,
  CallOptions,
  CallRequest,
  FinalizedToolset,
  FinalizeOptions,
  InputOf,
  OutputOf,
  PreparedCall,
  PrepareOptions,
  SelectedName,
  SelectedTools,
  SuggestedName,
  ToolDefinition,
  ToolName,
} from "./src/contract/toolset.ts";
export type {
  PermissionMode,
  PermissionProfile,
  SessionSandbox,
  ToolCallContext,
  ToolSessionContext,
} from "./src/contract/context.ts";
export type { CommandClassification, ToolEffect, ToolRisk } from "./src/contract/effects.ts";
export { approvalQuestion, LONG_EFFECT_CHARS } from "./src/contract/approval_question.ts";
export { visibleText } from "./src/contract/visible_text.ts";
export { ERROR_CODES, isToolError, ToolError } from "./src/errors.ts";
export type { ErrorCode, ToolErrorInfo } from "./src/errors.ts";
export type {
  Artifact,
  DiffHunk,
  FileChangeArtifact,
  ProgressSink,
  ToolFailure,
  ToolProgress,
  ToolResult,
  ToolResultBase,
  ToolSuccess,
} from "./src/contract/result.ts";
export type {
  InferSchemaOutput,
  JsonSchemaObject,
  StandardSchemaV1,
  StandardSchemaV1Issue,
  StandardSchemaV1Props,
  StandardSchemaV1Result,
} from "./src/contract/schema.ts";
export {
  toAnthropicTools,
  toGeminiFunctionDeclarations,
  toOpenAIResponsesTools,
  toOpenAITools,
  toPassThroughSchema,
} from "./src/contract/converters.ts";
export { toStrictJsonSchema } from "./src/contract/strict_schema.ts";
export type { MutableJsonSchemaObject } from "./src/contract/strict_schema.ts";
export { annotationsFor, RISK_HINTS } from "./src/contract/annotations.ts";
export type { ToolAnnotations, ToolHints } from "./src/contract/annotations.ts";
export type {
  AnthropicTool,
  GeminiFunctionDeclaration,
  JsonSchemaRequest,
  OpenAIFunctionDefinition,
  OpenAIResponsesTool,
  OpenAITool,
  OpenAIToolOptions,
  PassThroughSchema,
} from "./src/contract/converters.ts";

export { CheckedPath } from "./src/path/checked_path.ts";
export type { PathAccess, PathIntent, RootKind } from "./src/path/checked_path.ts";

export type {
  AsyncFileSystem,
  DirEntry,
  EntryKind,
  FileInfo,
  IndexWorkers,
  ReadChunksOptions,
  ReadFileOptions,
  ReplaceOptions,
  TreeGlob,
  TreeHit,
  TreeSearch,
  TreeWalk,
} from "./src/backends/filesystem.ts";
export type { IgnoreSource, IgnoreState } from "./src/search/walk.ts";
export type {
  FilesAnswer,
  FilesJob,
  SegmentAnswer,
  SegmentJob,
  StampAnswer,
  StampJob,
  TreeListAnswer,
  TreeListJob,
} from "./src/search/index/jobs.ts";
export type { PackedPaths } from "./src/search/index/packed_paths.ts";
export type {
  SearchIndexHandle,
  SearchIndexOptions,
  SearchIndexState,
  SearchIndexStats,
} from "./src/index/search_index.ts";
export type { IndexCacheStats } from "./src/index/cache_store.ts";
export type { Segment } from "./src/search/index/segment.ts";
export type {
  TreeWatcher,
  WatchHandlers,
  WatchTree,
  WatchTreeOptions,
} from "./src/backends/watch.ts";
export type {
  ProcessBackend,
  ProcessExit,
  ProcessHandle,
  ProcessOutput,
  SpawnRequest,
  TerminationTiming,
} from "./src/backends/process.ts";
export type { ScanLine, ScanMode, ScanRequest, ScanResult } from "./src/search/scan.ts";
export { createMemoryFileSystem } from "./src/backends/memory/filesystem.ts";
export { threadSearches } from "./src/backends/thread_search.ts";
export type { ThreadReads } from "./src/backends/thread_search.ts";
export type { MemoryFileSystem } from "./src/backends/memory/filesystem.ts";

export { decide } from "./src/permissions/policy.ts";
export type {
  ApprovalAnswer,
  PermissionDecision,
  Policy,
  PolicyDecision,
} from "./src/contract/policy.ts";
export { classifyCommand } from "./src/permissions/classifier.ts";
export type { ClassifyOptions } from "./src/permissions/classifier.ts";
export {
  MAX_CLASSIFIED_COMMAND_LENGTH,
  MAX_CLASSIFIER_LOOKUPS,
} from "./src/permissions/classification_budget.ts";

export { builtinRegistry } from "./src/tools/mod.ts";
export type { BuiltinTool } from "./src/tools/mod.ts";
export {
  bashTool,
  editTool,
  globTool,
  grepTool,
  listTool,
  readTool,
  writeTool,
} from "./src/tools/mod.ts";
export { MAX_COMMAND_BYTES } from "./src/tools/bash.ts";
export type { BashInput, BashOutput, ProcessStatus } from "./src/tools/bash.ts";
export type { EditInput, EditOutput } from "./src/tools/edit/edit.ts";
export type { GlobInput, GlobOutput } from "./src/tools/glob.ts";
export type { GrepInput, GrepLine, GrepOutput, GrepSkipped } from "./src/tools/grep.ts";
export type { ListEntry, ListInput, ListOutput } from "./src/tools/list.ts";
export type { ReadInput, ReadOutput } from "./src/tools/read.ts";
export type { WriteInput, WriteOutput } from "./src/tools/write.ts";
