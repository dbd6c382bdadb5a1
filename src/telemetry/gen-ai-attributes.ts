import type { Attributes } from '@opentelemetry/api';

/**
 * Attribute names of the OpenTelemetry GenAI semantic conventions (spans for inference, tool execution and agent
 * invocation), written out here: the conventions are still in development and `@opentelemetry/semantic-conventions`
 * ships them only from its incubating entry.
 */
export const genAi = {
  operationName: 'gen_ai.operation.name',
  providerName: 'gen_ai.provider.name',
  /** The older name of `gen_ai.provider.name`, still read by many backends. */
  system: 'gen_ai.system',
  requestModel: 'gen_ai.request.model',
  responseFinishReasons: 'gen_ai.response.finish_reasons',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  conversationId: 'gen_ai.conversation.id',
  agentName: 'gen_ai.agent.name',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolArguments: 'gen_ai.tool.call.arguments',
  toolResult: 'gen_ai.tool.call.result',
  inputMessages: 'gen_ai.input.messages',
  outputMessages: 'gen_ai.output.messages',
  errorType: 'error.type',
} as const;

/** Attribute names of agentlanes' own, for what the conventions do not name. */
export const agentlanes = {
  sessionKey: 'agentlanes.session.key',
  runId: 'agentlanes.run.id',
  runStatus: 'agentlanes.run.status',
  pausedIn: 'agentlanes.run.paused',
  resumedFrom: 'agentlanes.run.resumed_from',
  resumeReason: 'agentlanes.run.resume_reason',
  resumeAttempt: 'agentlanes.run.resume_attempt',
  /** A run span opened at the first event seen of a run whose start was not seen. */
  partial: 'agentlanes.run.partial',
  profileId: 'agentlanes.auth_profile.id',
  cost: 'agentlanes.cost',
  messageId: 'agentlanes.message.id',
  messageIds: 'agentlanes.message.ids',
  disposition: 'agentlanes.message.disposition',
  waitedMs: 'agentlanes.queue.waited_ms',
  stepId: 'agentlanes.step.id',
  /** A tool call found after a crash with no recorded outcome. */
  inDoubt: 'agentlanes.tool.in_doubt',
  /** Set on spans still open when tracing stopped: they end at the stop, not when their work did. */
  cut: 'agentlanes.trace.cut',
} as const;

/** The `gen_ai.input.messages` value for user messages: the conventions' JSON shape, one text part each. */
export function userMessages(texts: readonly string[]): string {
  return JSON.stringify(texts.map((content) => ({ role: 'user', parts: [{ type: 'text', content }] })));
}

/** The `gen_ai.output.messages` value for one assistant message. */
export function assistantMessage(content: string, finishReason: string | undefined): string {
  return JSON.stringify([
    {
      role: 'assistant',
      parts: [{ type: 'text', content }],
      ...(finishReason === undefined ? {} : { finish_reason: finishReason }),
    },
  ]);
}

/** A value as an attribute string: JSON, or its text when it cannot be serialized. */
export function jsonAttribute(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** Attributes without the undefined entries (an attribute set to undefined is dropped, but say so plainly). */
export function defined(attributes: Record<string, Attributes[string]>): Attributes {
  return Object.fromEntries(Object.entries(attributes).filter(([, value]) => value !== undefined));
}
