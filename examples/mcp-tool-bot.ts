/**
 * A bot whose tools come from an MCP server: read-only tools run at once, a destructive one waits for approval.
 *
 *   npx tsx examples/mcp-tool-bot.ts "read todo.md" "delete shopping.md"
 *
 * It starts examples/mcp-notes-server.ts over stdio (MCP_SERVER_URL points it at a Streamable HTTP server instead)
 * and answers with a scripted model, so it runs with no key and no network.
 */
import { fileURLToPath } from 'node:url';
import { createMemoryLedger, createRuntime } from 'agentlanes';
import { mcpTools, type McpTransport } from 'agentlanes/mcp';
import { scriptedModel } from 'agentlanes/testing';

const url = process.env.MCP_SERVER_URL;
const transport: McpTransport =
  url === undefined
    ? {
        // The stand-in runs under the same loader as this file (tsx), from wherever it is started.
        command: process.execPath,
        args: [...process.execArgv, fileURLToPath(new URL('./mcp-notes-server.ts', import.meta.url))],
        // Secrets for the server go here or in headers: they never reach the ledger, events or errors.
        env: { NOTES_TOKEN: process.env.NOTES_TOKEN ?? 'stand-in-token' },
      }
    : { url, headers: { authorization: `Bearer ${process.env.MCP_TOKEN ?? ''}` } };

// The server's tools become notes_list_notes, notes_read_note, notes_delete_note (risk from its annotations).
const notes = await mcpTools({ name: 'notes', transport });

/** A stand-in model: calls the tool the message asks for, then reports what the tool said. */
const model = scriptedModel((request) => {
  const last = request.messages.at(-1);
  if (last?.role === 'tool') return { text: `${last.tool} says: ${last.content}` };
  const [verb = 'list', name = 'todo.md'] = (last?.content ?? '').split(/\s+/);
  if (verb === 'delete') return { toolCalls: [{ name: 'notes_delete_note', args: { name } }] };
  if (verb === 'read') return { toolCalls: [{ name: 'notes_read_note', args: { name } }] };
  return { toolCalls: [{ name: 'notes_list_notes', args: {} }] };
});

const runtime = createRuntime({
  ledger: createMemoryLedger(),
  providers: { scripted: model },
  model: { provider: 'scripted', model: 'notes' },
  tools: [notes],
  toolGroups: { ...notes.groups }, // group:notes, for tool policies
});

const session = runtime.session('cli:1');
const asks = process.argv.slice(2);
for (const text of asks.length > 0 ? asks : ['list', 'read todo.md', 'delete shopping.md']) {
  await session.send({ text });
  let ended = await session.waitForEnd({ timeoutMs: 60_000 });
  while (ended.status === 'paused') {
    // An operator would decide here (a button in the chat, the dashboard); the example approves.
    for (const waiting of ended.waiting) {
      console.log(`approval needed: ${waiting.tool}`);
      await session.approve({ toolCallId: waiting.toolCallId, decision: 'approve' });
    }
    ended = await session.waitForEnd({ timeoutMs: 60_000 });
  }
  const run = ended.status === 'ended' ? ended.run : undefined;
  console.log(run?.status === 'completed' ? `reply: ${run.text}` : `no reply (${ended.status})`);
}
await runtime.close();
await notes.close();
