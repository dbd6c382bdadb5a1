import { context, isSpanContextValid, trace, type Context, type SpanContext } from '@opentelemetry/api';
import type { InboundMessageInput } from '../runtime/index.js';

const traceparentPattern = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** A message as `send()` takes it, with the sender's trace context. */
export type TracedMessage = Exclude<InboundMessageInput, string>;

/**
 * The message with the W3C `traceparent` of the active span (or of `from`), so the run that answers it, on
 * whichever worker runs it, is a child of that span in traces made by `traceRuntime`. Without an active span (no
 * SDK installed, or no span open) the message is returned as it is.
 */
export function withTraceContext(
  message: InboundMessageInput,
  from: Context = context.active(),
): TracedMessage {
  const base = typeof message === 'string' ? { text: message } : message;
  const span = trace.getSpanContext(from);
  if (span === undefined || !isSpanContextValid(span)) return base;
  const flags = (span.traceFlags & 0xff).toString(16).padStart(2, '0');
  return { ...base, traceparent: `00-${span.traceId}-${span.spanId}-${flags}` };
}

/** The span context a `traceparent` names, as a remote parent; undefined when it is not a valid one. */
export function spanContextOf(traceparent: string | undefined): SpanContext | undefined {
  const match = traceparent === undefined ? null : traceparentPattern.exec(traceparent);
  if (match === null) return undefined;
  const [, version, traceId, spanId, flags] = match as unknown as [string, string, string, string, string];
  if (version === 'ff') return undefined;
  const span: SpanContext = { traceId, spanId, traceFlags: parseInt(flags, 16), isRemote: true };
  return isSpanContextValid(span) ? span : undefined;
}
