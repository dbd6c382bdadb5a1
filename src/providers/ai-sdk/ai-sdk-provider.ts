import type {
  LanguageModelV2,
  LanguageModelV2CallOptions,
  LanguageModelV3,
  LanguageModelV3CallOptions,
} from '@ai-sdk/provider';
import { abortReason, systemClock, type Clock } from '../../core/index.js';
import { RuntimeError } from '../../core/index.js';
import type { InlineCapability } from '../../policies/index.js';
import {
  ProviderError,
  type ModelCallOptions,
  type ModelPart,
  type ModelProvider,
  type ModelRequest,
} from '../model-provider.js';
import { toProviderError } from './ai-sdk-errors.js';
import { createPartFolder } from './ai-sdk-parts.js';
import { toCallOptions, type AiSdkProviderOptions, type CallSettings } from './ai-sdk-prompt.js';

/** A language model of the AI SDK: specification v2 (`ai` 5) or v3 (`ai` 6). */
export type AiSdkLanguageModel = LanguageModelV2 | LanguageModelV3;

/**
 * Builds the model for one call: `apiKey` is the auth profile's secret (else the provider's `apiKey` option),
 * `modelId` the run's model name.
 */
export type AiSdkModelFactory = (apiKey: string, modelId: string) => AiSdkLanguageModel;

/** Options of `aiSdkProvider`. */
export interface AiSdkProviderConfig {
  /**
   * The model, or a factory making one per API key and model id, e.g.
   * `(apiKey, modelId) => createOpenAI({ apiKey })(modelId)`. A fixed model ignores auth profiles and the run's
   * model name; a factory is called once per key and model id, and its model is reused.
   */
  readonly model: AiSdkLanguageModel | AiSdkModelFactory;
  /**
   * The key a factory gets when a call brings no auth-profile credential: a value, or an environment variable
   * read at call time. Never logged.
   * @default undefined (a factory's call without a credential then fails with code 'missing_api_key')
   */
  readonly apiKey?: string | { readonly env: string };
  /**
   * The output token limit of every call.
   * @default the provider's own
   */
  readonly maxOutputTokens?: number;
  /**
   * Provider options per provider name (`{ openai: { … } }`), merged over the thinking level's.
   * @default {}
   */
  readonly providerOptions?: AiSdkProviderOptions;
  /**
   * What its models take inline, first matching row wins.
   * @default none: the provider takes no inline content
   */
  readonly inlineCapabilities?: readonly InlineCapability[];
  /**
   * The clock a `retry-after` HTTP date is measured against.
   * @default systemClock
   */
  readonly clock?: Pick<Clock, 'now'>;
}

function isLanguageModel(value: unknown): value is AiSdkLanguageModel {
  if (typeof value !== 'object' || value === null) return false;
  const model = value as { specificationVersion?: unknown; doStream?: unknown };
  return (
    (model.specificationVersion === 'v2' || model.specificationVersion === 'v3') &&
    typeof model.doStream === 'function'
  );
}

function describeValue(value: unknown): string {
  if (typeof value !== 'object' || value === null) return typeof value;
  const version = (value as { specificationVersion?: unknown }).specificationVersion;
  return typeof version === 'string' ? `a model of specification ${version}` : 'an object that is no model';
}

/** The call's key: its credential, else the configured one; a factory cannot make a model without one. */
function resolveApiKey(configured: AiSdkProviderConfig['apiKey'], credential: string | undefined): string {
  const secret = credential ?? (typeof configured === 'object' ? process.env[configured.env] : configured);
  if (secret !== undefined && secret.length > 0) return secret;
  const where =
    typeof configured === 'object' ? `environment variable ${configured.env} is empty` : 'none given';
  throw new ProviderError(`AI SDK model: API key missing (${where}): pass apiKey or an auth profile`, {
    status: 401,
    code: 'missing_api_key',
  });
}

/** The model of one call and the key it was made with (scrubbed from every error). */
type ModelSource = (
  credential: string | undefined,
  modelId: string,
) => { readonly model: AiSdkLanguageModel; readonly secret: string | undefined };

/** One model per key and model id, made on first use; a fixed model is used as it is. */
function createModelSource(config: AiSdkProviderConfig): ModelSource {
  const model = config.model;
  if (typeof model !== 'function') return (credential) => ({ model, secret: credential });
  const made = new Map<string, AiSdkLanguageModel>();
  return (credential, modelId) => {
    const apiKey = resolveApiKey(config.apiKey, credential);
    const key = `${modelId}\u0000${apiKey}`;
    const cached = made.get(key);
    if (cached !== undefined) return { model: cached, secret: apiKey };
    const created: unknown = model(apiKey, modelId);
    if (!isLanguageModel(created)) {
      throw new RuntimeError(
        'invalid_input',
        `aiSdkProvider: the model factory returned ${describeValue(created)} for "${modelId}", not a LanguageModelV2 or V3`,
      );
    }
    made.set(key, created);
    return { model: created, secret: apiKey };
  };
}

/**
 * A ModelProvider on any AI SDK language model (OpenAI, Anthropic, Google, Mistral, Bedrock, Ollama…): tools,
 * thinking, failover reasons from `APICallError`, abort down to the request. Throws `invalid_input` on bad options.
 */
export function aiSdkProvider(config: AiSdkProviderConfig): ModelProvider {
  const model: unknown = (config as { model?: unknown } | undefined)?.model;
  if (typeof model !== 'function' && !isLanguageModel(model)) {
    throw new RuntimeError(
      'invalid_input',
      `aiSdkProvider: model must be a LanguageModelV2/V3 or a function (apiKey, modelId) => model, got ${describeValue(model)}`,
    );
  }
  const apiKey: unknown = config.apiKey;
  const validKey =
    apiKey === undefined ||
    (typeof apiKey === 'string' && apiKey.length > 0) ||
    (typeof apiKey === 'object' && apiKey !== null && typeof (apiKey as { env?: unknown }).env === 'string');
  if (!validKey) {
    throw new RuntimeError('invalid_input', 'aiSdkProvider: apiKey must be a non-empty string or { env }');
  }
  const maxOutputTokens = config.maxOutputTokens;
  if (maxOutputTokens !== undefined && (!Number.isInteger(maxOutputTokens) || maxOutputTokens < 1)) {
    throw new RuntimeError('invalid_input', 'aiSdkProvider: maxOutputTokens must be a positive integer');
  }
  const source = createModelSource(config);
  const settings: CallSettings = { maxOutputTokens, providerOptions: config.providerOptions };
  const clock = config.clock ?? systemClock;
  return {
    stream: (request, options) => streamModel(source, settings, clock, request, options),
    ...(config.inlineCapabilities === undefined ? {} : { inlineCapabilities: config.inlineCapabilities }),
  };
}

async function* streamModel(
  source: ModelSource,
  settings: CallSettings,
  clock: Pick<Clock, 'now'>,
  request: ModelRequest,
  { signal, credential }: ModelCallOptions,
): AsyncGenerator<ModelPart> {
  if (signal.aborted) throw abortReason(signal);
  let secret = credential?.secret;
  const folder = createPartFolder();
  let reader: ReadableStreamDefaultReader<unknown> | undefined;
  try {
    const made = source(secret, request.model);
    secret = made.secret;
    const model = made.model;
    // Built before the call: a request it cannot express fails as it is, not as a transport failure.
    const callOptions = toCallOptions(request, settings, signal);
    const result = await doStream(model, callOptions);
    reader = result.stream.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const parts = folder.fold(value);
      if (folder.streamedError !== undefined) throw folder.streamedError.error;
      yield* parts;
    }
    // A stream that ends quietly when aborted.
    if (signal.aborted) throw abortReason(signal);
    yield* folder.end();
  } catch (error) {
    if (signal.aborted) throw abortReason(signal);
    // Bad configuration (a factory that made no model, content the request cannot carry) stays as it is.
    if (error instanceof RuntimeError) throw error;
    throw toProviderError(error, { secret, now: clock.now() });
  } finally {
    // Stops the body (and the request under it) when the consumer stops early or a part was refused.
    reader?.cancel().catch(() => undefined);
  }
}

/** `doStream` of either specification, with a clear error when the model hands back no stream. */
async function doStream(model: AiSdkLanguageModel, options: LanguageModelV3CallOptions) {
  const result =
    model.specificationVersion === 'v3'
      ? await model.doStream(options)
      : await model.doStream(options as LanguageModelV2CallOptions);
  const stream: unknown = (result as { stream?: unknown } | undefined)?.stream;
  if (typeof (stream as { getReader?: unknown } | undefined)?.getReader !== 'function') {
    throw new RuntimeError(
      'internal',
      `aiSdkProvider: ${model.provider}/${model.modelId} doStream returned no ReadableStream`,
    );
  }
  return { stream: stream as ReadableStream<unknown> };
}
