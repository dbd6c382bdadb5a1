/**
 * A stdio MCP server built with the SDK's own classes, for the MCP tool tests: notes to read and delete, a tool that
 * waits until it is cancelled, its own pid, a tool that adds tools (the SDK then sends `tools/list_changed`), and
 * tools that echo the secret of its environment. Run: `node --import tsx test/support/mcp/files-server.ts`.
 */
import { existsSync } from 'node:fs';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createFilesServer } from './files-tools.js';

// A test that wants restarts to fail creates this file: the server then exits at once.
const refuseIf = process.env.FILES_REFUSE_IF;
if (refuseIf !== undefined && existsSync(refuseIf)) process.exit(1);

const server = createFilesServer({ secret: process.env.FILES_TOKEN ?? '' });
await server.connect(new StdioServerTransport());
