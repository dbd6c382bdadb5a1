import { scrubSecrets } from '../../core/index.js';

/** What an MCP `tools/call` answers (the parts agentlanes reads). */
export interface McpCallResult {
  readonly content?: unknown;
  readonly structuredContent?: unknown;
  readonly isError?: unknown;
}

interface TextContent {
  readonly type: 'text';
  readonly text: string;
}

const isText = (part: unknown): part is TextContent =>
  typeof part === 'object' &&
  part !== null &&
  (part as { type?: unknown }).type === 'text' &&
  typeof (part as { text?: unknown }).text === 'string';

const contentOf = (result: McpCallResult): unknown[] =>
  Array.isArray(result.content) ? (result.content as unknown[]) : [];

/**
 * The output the model sees: the structured content when the server gives one, else the text parts joined, else
 * the content parts as they are (images, resources).
 */
export function mcpOutput(result: McpCallResult): unknown {
  if (result.structuredContent !== undefined) return result.structuredContent;
  const content = contentOf(result);
  if (content.every(isText)) return content.map((part) => part.text).join('\n');
  return content;
}

/** The message of a result the server marked `isError`: its text, or a generic line. */
export function mcpErrorText(result: McpCallResult): string {
  const text = contentOf(result)
    .filter(isText)
    .map((part) => part.text)
    .join('\n');
  return text === '' ? 'the tool reported an error' : text;
}

/** `value` with every string scrubbed of `secrets`, deep (outputs go to the ledger and the model). */
export function scrubDeep(value: unknown, secrets: readonly string[]): unknown {
  if (secrets.length === 0) return value;
  if (typeof value === 'string') return scrubSecrets(value, secrets);
  if (Array.isArray(value)) return value.map((item) => scrubDeep(item, secrets));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, scrubDeep(item, secrets)] as const),
    );
  }
  return value;
}
