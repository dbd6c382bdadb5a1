/** Translation between the model seam and Anthropic's Messages API wire format: request body and stream events. */
import type {
  ContentBlockParam,
  MessageCreateParamsStreaming,
  MessageParam,
  RawMessageStreamEvent,
  Tool,
  ToolResultBlockParam,
} from '@anthropic-ai/sdk/resources/messages';
import { anthropicContentBlock } from './anthropic-content.js';
import {
  ProviderError,
  type FinishReason,
  type ModelMessage,
  type ModelPart,
  type ModelRequest,
  type ThinkingLevel,
} from '../model-provider.js';

/** The `budget_tokens` each thinking level asks Anthropic for; `off` sends no thinking at all. */
export const anthropicThinkingBudgets: Readonly<Record<Exclude<ThinkingLevel, 'off'>, number>> = {
  minimal: 1024,
  low: 2048,
  medium: 4096,
  high: 8192,
};

type Role = 'user' | 'assistant';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function assistantBlocks(message: Extract<ModelMessage, { role: 'assistant' }>): ContentBlockParam[] {
  // Anthropic rejects empty text blocks, and `tool_use.input` must be an object.
  const blocks: ContentBlockParam[] = message.content ? [{ type: 'text', text: message.content }] : [];
  for (const call of message.toolCalls ?? []) {
    blocks.push({
      type: 'tool_use',
      id: call.id,
      name: call.name,
      input: isRecord(call.args) ? call.args : {},
    });
  }
  return blocks;
}

function toolResultBlock(message: Extract<ModelMessage, { role: 'tool' }>): ToolResultBlockParam {
  const block: ToolResultBlockParam = {
    type: 'tool_result',
    tool_use_id: message.toolCallId,
    content: message.content,
  };
  return message.isError ? { ...block, is_error: true } : block;
}

/**
 * Anthropic wants user and assistant turns to alternate and every tool result in the user turn right after the
 * assistant's tool_use blocks, tool results first. So consecutive messages of one role become one message, and in
 * a merged user turn the tool results go before the text.
 */
export function toAnthropicMessages(messages: readonly ModelMessage[]): MessageParam[] {
  const turns: { role: Role; results: ToolResultBlockParam[]; blocks: ContentBlockParam[] }[] = [];
  const turnFor = (role: Role): (typeof turns)[number] => {
    const last = turns.at(-1);
    if (last?.role === role) return last;
    const turn = { role, results: [], blocks: [] };
    turns.push(turn);
    return turn;
  };
  for (const message of messages) {
    if (message.role === 'tool') turnFor('user').results.push(toolResultBlock(message));
    else if (message.role === 'user') {
      const blocks: ContentBlockParam[] = message.content ? [{ type: 'text', text: message.content }] : [];
      for (const attachment of message.attachments ?? []) blocks.push(anthropicContentBlock(attachment));
      if (blocks.length > 0) turnFor('user').blocks.push(...blocks);
    } else {
      const blocks = assistantBlocks(message);
      if (blocks.length > 0) turnFor('assistant').blocks.push(...blocks);
    }
  }
  return turns.map(({ role, results, blocks }) => ({ role, content: [...results, ...blocks] }));
}

/**
 * Thinking only at the start of an assistant turn: inside a tool loop Anthropic requires the turn's signed thinking
 * blocks to be echoed back, and the seam's messages do not carry them, so the continuation goes without thinking.
 */
function thinkingBudget(request: ModelRequest): number | undefined {
  const level = request.thinking;
  if (level === undefined || level === 'off') return undefined;
  if (request.messages.at(-1)?.role === 'tool') return undefined;
  return anthropicThinkingBudgets[level];
}

/** The streaming Messages API body for `request`; `maxTokens` is the answer's room, thinking's budget comes on top. */
export function toAnthropicParams(request: ModelRequest, maxTokens: number): MessageCreateParamsStreaming {
  const budget = thinkingBudget(request);
  const params: MessageCreateParamsStreaming = {
    model: request.model,
    max_tokens: budget === undefined ? maxTokens : budget + maxTokens,
    messages: toAnthropicMessages(request.messages),
    stream: true,
  };
  if (request.system) params.system = request.system;
  if (request.tools.length > 0) {
    params.tools = request.tools.map((tool): Tool => ({
      name: tool.name,
      description: tool.description,
      input_schema: tool.inputSchema as Tool.InputSchema,
    }));
  }
  if (budget !== undefined) params.thinking = { type: 'enabled', budget_tokens: budget };
  return params;
}

function finishReason(stopReason: string | null | undefined): FinishReason {
  if (stopReason === 'tool_use') return 'tool_calls';
  // Both mean the answer was cut off by a token limit.
  if (stopReason === 'max_tokens' || stopReason === 'model_context_window_exceeded') return 'length';
  return 'stop';
}

interface ToolBlock {
  readonly id: string;
  readonly name: string;
  readonly initialInput: unknown;
  json: string;
}

function parseToolInput(block: ToolBlock): unknown {
  if (block.json === '') return block.initialInput ?? {};
  try {
    return JSON.parse(block.json) as unknown;
  } catch (error) {
    throw new ProviderError(
      `Anthropic sent malformed JSON for the input of tool call ${block.id} (${block.name})`,
      {
        status: 502,
        code: 'malformed_response',
        cause: error,
      },
    );
  }
}

/** Folds Anthropic stream events into seam parts; `end()` throws when the stream stopped before `message_stop`. */
export interface AnthropicEventFolder {
  fold(event: RawMessageStreamEvent): ModelPart[];
  end(): void;
}

type StreamEvent<Type extends RawMessageStreamEvent['type']> = Extract<RawMessageStreamEvent, { type: Type }>;

/** The state of one streamed message: its open tool blocks, its token counts and whether it stopped. */
class EventFolder implements AnthropicEventFolder {
  private readonly toolBlocks = new Map<number, ToolBlock>();
  private inputTokens = 0;
  private outputTokens = 0;
  private stopReason: string | null | undefined;
  private stopped = false;

  fold(event: RawMessageStreamEvent): ModelPart[] {
    switch (event.type) {
      case 'message_start':
        this.countInput(event.message.usage as unknown as Record<string, unknown> | undefined);
        this.outputTokens = event.message.usage?.output_tokens ?? this.outputTokens;
        return [];
      case 'content_block_start':
        return this.blockStart(event);
      case 'content_block_delta':
        return this.blockDelta(event);
      case 'content_block_stop':
        return this.blockStop(event);
      case 'message_delta':
        this.countInput(event.usage as unknown as Record<string, unknown> | undefined);
        this.outputTokens = event.usage?.output_tokens ?? this.outputTokens;
        this.stopReason = event.delta?.stop_reason ?? this.stopReason;
        return [];
      case 'message_stop':
        this.stopped = true;
        return [
          { type: 'usage', usage: { inputTokens: this.inputTokens, outputTokens: this.outputTokens } },
          { type: 'finish', reason: finishReason(this.stopReason) },
        ];
      default:
        // The wire is open even where the SDK's union is closed: a newer API (or a proxy) sends event types
        // (`ping`, `error`, ...) this folder does not know, and those carry nothing to fold.
        return [];
    }
  }

  end(): void {
    if (this.stopped) return;
    // ECONNRESET, like a socket dropped mid-body: the failover policy treats both as a transient cut.
    throw new ProviderError('Anthropic stream was cut: it ended before message_stop', { code: 'ECONNRESET' });
  }

  // The wire is untrusted: read the counts defensively, a proxy may leave fields out.
  private countInput(usage: Partial<Record<string, unknown>> | null | undefined): void {
    if (typeof usage?.['input_tokens'] !== 'number') return;
    const cached = [usage['cache_creation_input_tokens'], usage['cache_read_input_tokens']];
    this.inputTokens =
      usage['input_tokens'] + cached.reduce<number>((sum, n) => sum + (typeof n === 'number' ? n : 0), 0);
  }

  private blockStart(event: StreamEvent<'content_block_start'>): ModelPart[] {
    const block = event.content_block;
    if (block.type === 'tool_use') {
      this.toolBlocks.set(event.index, {
        id: block.id,
        name: block.name,
        initialInput: block.input,
        json: '',
      });
    }
    if (block.type === 'text' && block.text) return [{ type: 'text', delta: block.text }];
    if (block.type === 'thinking' && block.thinking) return [{ type: 'reasoning', delta: block.thinking }];
    return [];
  }

  private blockDelta(event: StreamEvent<'content_block_delta'>): ModelPart[] {
    const delta = event.delta;
    if (delta.type === 'text_delta') return delta.text ? [{ type: 'text', delta: delta.text }] : [];
    if (delta.type === 'thinking_delta')
      return delta.thinking ? [{ type: 'reasoning', delta: delta.thinking }] : [];
    if (delta.type === 'input_json_delta') {
      const block = this.toolBlocks.get(event.index);
      if (block) block.json += delta.partial_json;
    }
    return [];
  }

  private blockStop(event: StreamEvent<'content_block_stop'>): ModelPart[] {
    const block = this.toolBlocks.get(event.index);
    if (!block) return [];
    this.toolBlocks.delete(event.index);
    return [{ type: 'tool_call', call: { id: block.id, name: block.name, args: parseToolInput(block) } }];
  }
}

/** Create a folder for one streamed message. */
export function createEventFolder(): AnthropicEventFolder {
  return new EventFolder();
}
