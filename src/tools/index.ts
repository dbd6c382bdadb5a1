export {
  defineTool,
  toolRisks,
  type Tool,
  type ToolContext,
  type ToolDefinition,
  type ToolRisk,
} from './define-tool.js';
export { createToolRegistry, type ToolRegistry } from './tool-registry.js';
