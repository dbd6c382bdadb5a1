/**
 * A small MCP server over stdio, the stand-in that examples/mcp-tool-bot.ts starts: notes to list, read and delete,
 * built with the MCP SDK's own McpServer. Any MCP server works the same way (a filesystem server, GitHub's, yours).
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const notes = new Map([
  ['todo.md', 'Buy milk. Call the plumber.'],
  ['shopping.md', 'Milk, eggs, bread.'],
]);
const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] });

const server = new McpServer({ name: 'notes', version: '1.0.0' });
server.registerTool(
  'list_notes',
  { description: 'The names of all notes', annotations: { readOnlyHint: true } },
  () => text([...notes.keys()].join(', ')),
);
server.registerTool(
  'read_note',
  {
    description: 'Read one note',
    inputSchema: { name: z.string().describe('The note, e.g. todo.md') },
    annotations: { readOnlyHint: true },
  },
  ({ name }) => {
    const note = notes.get(name);
    return note === undefined ? { ...text(`no note named ${name}`), isError: true } : text(note);
  },
);
server.registerTool(
  'delete_note',
  {
    description: 'Delete a note',
    inputSchema: { name: z.string() },
    annotations: { destructiveHint: true },
  },
  ({ name }) => text(notes.delete(name) ? `deleted ${name}` : `no note named ${name}`),
);
await server.connect(new StdioServerTransport());
