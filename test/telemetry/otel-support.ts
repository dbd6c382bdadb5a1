import type { Context } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
  type Span,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';

/** An SDK tracer exporting to memory, and a way to wait for a span by name without sleeping. */
export interface SpanRecorder {
  readonly provider: BasicTracerProvider;
  readonly exporter: InMemorySpanExporter;
  /** The finished spans, in the order they ended. */
  spans(): ReadableSpan[];
  /** Resolves with the `count`-th span whose name starts with `prefix` once it ended (1 = the first). */
  ended(prefix: string, count?: number): Promise<ReadableSpan>;
}

/** Build the recorder: a BasicTracerProvider with the SDK's InMemorySpanExporter behind a SimpleSpanProcessor. */
export function createSpanRecorder(): SpanRecorder {
  const exporter = new InMemorySpanExporter();
  const waiters: { prefix: string; count: number; resolve: (span: ReadableSpan) => void }[] = [];
  const check = (): void => {
    const finished = exporter.getFinishedSpans();
    for (const waiter of [...waiters]) {
      const matching = finished.filter((span) => span.name.startsWith(waiter.prefix));
      const span = matching[waiter.count - 1];
      if (span === undefined) continue;
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve(span);
    }
  };
  // Runs after the exporting processor (processors are called in order), so the span is in the exporter.
  const notifier: SpanProcessor = {
    onStart: (_span: Span, _context: Context) => undefined,
    onEnd: () => check(),
    forceFlush: () => Promise.resolve(),
    shutdown: () => Promise.resolve(),
  };
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter), notifier] });
  return {
    provider,
    exporter,
    spans: () => exporter.getFinishedSpans(),
    ended(prefix, count = 1) {
      return new Promise((resolve) => {
        waiters.push({ prefix, count, resolve });
        check();
      });
    },
  };
}

/** Everything a span shows an exporter as text: name, attributes, events and their attributes, status. */
export function exportedText(spans: readonly ReadableSpan[]): string {
  return JSON.stringify(
    spans.map((span) => ({
      name: span.name,
      attributes: span.attributes,
      events: span.events.map((event) => ({ name: event.name, attributes: event.attributes })),
      status: span.status,
      links: span.links.map((link) => link.attributes),
    })),
  );
}

/** The span's parent span id, or undefined for a root span. */
export function parentOf(span: ReadableSpan): string | undefined {
  return span.parentSpanContext?.spanId;
}
