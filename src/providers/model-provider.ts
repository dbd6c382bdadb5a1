import type { ToolCall, ToolSpec, Usage } from '../core/index.js';
import type { ThinkingLevel } from '../core/index.js';
import type { InlineAttachment } from '../core/index.js';
import type { InlineCapability } from '../policies/index.js';

export type { ToolCall, ToolSpec, Usage, InlineAttachment, InlineCapability };
export { thinkingLevels, type ThinkingLevel } from '../core/index.js';

/** One message of the conversation sent to the model. */
export type ModelMessage =
  | {
      readonly role: 'user';
      readonly content: string;
      /** Images, audio and PDFs passed into the model's context after the text (inline content parts). */
      readonly attachments?: readonly InlineAttachment[];
    }
  | { readonly role: 'assistant'; readonly content: string; readonly toolCalls?: readonly ToolCall[] }
  | {
      readonly role: 'tool';
      readonly toolCallId: string;
      readonly tool: string;
      readonly content: string;
      readonly isError?: boolean;
    };

/** One model call's request. */
export interface ModelRequest {
  readonly model: string;
  readonly system?: string;
  readonly messages: readonly ModelMessage[];
  readonly tools: readonly ToolSpec[];
  readonly thinking?: ThinkingLevel;
}

/** The opaque credential of an auth profile, resolved at call time; never stored, logged or emitted. */
export interface ProviderCredential {
  readonly profileId: string;
  readonly secret: string;
}

/** Per-call options: the run's abort signal and, when the provider has auth profiles, the credential. */
export interface ModelCallOptions {
  readonly signal: AbortSignal;
  readonly credential?: ProviderCredential;
}

/** Why a model call stopped. */
export type FinishReason = 'stop' | 'tool_calls' | 'length';

/** One part of a streamed model response. */
export type ModelPart =
  | { readonly type: 'text'; readonly delta: string }
  | { readonly type: 'reasoning'; readonly delta: string }
  | { readonly type: 'tool_call'; readonly call: ToolCall }
  | { readonly type: 'usage'; readonly usage: Usage }
  | { readonly type: 'finish'; readonly reason: FinishReason };

/** The seam every model provider implements: one streaming call. */
export interface ModelProvider {
  stream(request: ModelRequest, options: ModelCallOptions): AsyncIterable<ModelPart>;
  /**
   * What its models take inline, first matching row wins (`createRuntime`'s `attachments.inline` overrides it).
   * @default none: the provider takes no inline content
   */
  readonly inlineCapabilities?: readonly InlineCapability[];
}

/** A failure reported by a provider: HTTP-like status, provider code, message and an optional Retry-After. */
export class ProviderError extends Error {
  override readonly name = 'ProviderError';
  readonly status: number | undefined;
  readonly code: string | undefined;
  readonly retryAfterMs: number | undefined;

  constructor(
    message: string,
    options: { status?: number; code?: string; retryAfterMs?: number; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.status = options.status;
    this.code = options.code;
    this.retryAfterMs = options.retryAfterMs;
  }
}
