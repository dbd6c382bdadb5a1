import { abortReason, storableText } from '../core/index.js';
import type {
  FinishReason,
  ModelMessage,
  ModelProvider,
  ModelRequest,
  ProviderCredential,
  ThinkingLevel,
  ToolCall,
  Usage,
} from '../providers/index.js';
import { createBlockChunker } from '../policies/index.js';
import type { RunContext } from './run-context.js';

/** What one model call produced. */
export interface ModelTurn {
  readonly text: string;
  readonly toolCalls: readonly ToolCall[];
  readonly usage: Usage;
  /** Why the model stopped, when the provider said so. */
  readonly finishReason?: FinishReason;
}

/** Text streamed so far in the run, kept outside the call so an abort still sees the partial output. */
export interface RunText {
  text: string;
  blockIndex: number;
}

/** Where one attempt goes: the provider, model, thinking level and credential. */
export interface ModelTarget {
  readonly provider: ModelProvider;
  readonly model: string;
  readonly thinking: ThinkingLevel | undefined;
  readonly credential: ProviderCredential | undefined;
}

/** A tool call whose id and name a ledger can store (the model chose them; its arguments are stored as JSON). */
function storableCall(call: ToolCall): ToolCall {
  const id = storableText(call.id);
  const name = storableText(call.name);
  return id === call.id && name === call.name ? call : { ...call, id, name };
}

/** The request one attempt sends: the run's messages and tools, the system prompt and the target's thinking level. */
function modelRequest(
  context: RunContext,
  messages: readonly ModelMessage[],
  target: ModelTarget,
): ModelRequest {
  const { system } = context.services;
  return {
    model: target.model,
    messages,
    tools: context.tools.specs,
    ...(system === undefined ? {} : { system }),
    ...(target.thinking === undefined ? {} : { thinking: target.thinking }),
  };
}

/**
 * One model call: stream it and fold the parts into events (`assistant.delta` per token,
 * `assistant.block` per chunk, `assistant.reasoning`) and a turn (text, tool calls, usage).
 */
export async function streamModelTurn(
  context: RunContext,
  messages: readonly ModelMessage[],
  runText: RunText,
  target: ModelTarget,
): Promise<ModelTurn> {
  const { runId, signal } = context;
  const chunker = createBlockChunker(context.services.blocks);
  const toolCalls: ToolCall[] = [];
  let text = '';
  let inputTokens = 0;
  let outputTokens = 0;
  let finishReason: FinishReason | undefined;
  const separator = runText.text.length > 0 ? '\n\n' : '';
  const options = target.credential === undefined ? { signal } : { signal, credential: target.credential };
  const emitBlocks = (blocks: readonly string[]): void => {
    for (const block of blocks) {
      const index = runText.blockIndex++;
      context.emit({ type: 'assistant.block', runId, index, blockId: `${runId}:${index}`, text: block });
    }
  };
  // What the model says is made storable as it arrives (a U+0000 becomes U+FFFD), so the deltas a client reads,
  // the turn and the run's text all say the same on every ledger.
  for await (const part of target.provider.stream(modelRequest(context, messages, target), options)) {
    if (signal.aborted) throw abortReason(signal);
    switch (part.type) {
      case 'text': {
        if (part.delta.length === 0) break;
        const delta = storableText(part.delta);
        if (text.length === 0) runText.text += separator;
        text += delta;
        runText.text += delta;
        context.emit({ type: 'assistant.delta', runId, delta });
        emitBlocks(chunker.push(delta));
        break;
      }
      case 'reasoning':
        context.emit({ type: 'assistant.reasoning', runId, delta: storableText(part.delta) });
        break;
      case 'tool_call':
        toolCalls.push(storableCall(part.call));
        break;
      case 'usage':
        inputTokens += part.usage.inputTokens;
        outputTokens += part.usage.outputTokens;
        break;
      case 'finish':
        finishReason = part.reason;
        break;
    }
  }
  if (signal.aborted) throw abortReason(signal);
  emitBlocks(chunker.flush());
  const usage = { inputTokens, outputTokens };
  return finishReason === undefined ? { text, toolCalls, usage } : { text, toolCalls, usage, finishReason };
}
