export { mcpTools, mcpToolName, type McpToolSource } from './mcp-tools.js';
export type { McpToolsOptions } from './mcp-tools-options.js';
export type { McpEvent, McpHttpTransport, McpStdioTransport, McpTransport } from './mcp-connection.js';
export { isIdempotentMcpTool, riskOfMcpTool, type McpToolHints } from './mcp-annotations.js';
