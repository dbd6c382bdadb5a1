/**
 * `agentlanes/otel`: OpenTelemetry traces of a runtime's runs, model calls, tool calls, queue waits and failover,
 * through `@opentelemetry/api` (an optional peer dependency; a no-op until the application installs an SDK).
 */
export { traceRuntime, type TraceRuntimeOptions } from './trace-runtime.js';
export { withTraceContext, type TracedMessage } from './trace-context.js';
