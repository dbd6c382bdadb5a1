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
