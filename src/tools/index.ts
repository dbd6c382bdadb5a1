export {
  defineTool,
  toolRisks,
  type Tool,
  type ToolContext,
  type ToolDefinition,
  type ToolRisk,
} from './define-tool.js';
export { createToolRegistry, type ToolRegistry } from './tool-registry.js';
export { executeTool, toolFailure, type ExecuteToolOptions, type ToolOutcome } from './execute-tool.js';
export { resolveTool, type ResolvedTool } from './resolve-tool.js';
export { currentTools, isToolSource, sameTools, type ToolEntry, type ToolSource } from './tool-source.js';
export { describeInvalidArgs } from './describe-invalid-args.js';
export { describeUrl, downloadPart } from './workspace-download.js';
export { safeFileName } from './workspace-paths.js';
export { createWorkspaceStore, type WorkspaceStore } from './workspace-store.js';
