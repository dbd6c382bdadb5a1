import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Link,
  type Span,
  type SpanContext,
  type Tracer,
} from '@opentelemetry/api';
import type { EventOf, RuntimeEvent } from '../core/index.js';
import {
  agentlanes,
  assistantMessage,
  defined,
  genAi,
  jsonAttribute,
  userMessages,
} from './gen-ai-attributes.js';
import { ReceivedMessages, type ReceivedMessage } from './received-messages.js';
import { spanContextOf } from './trace-context.js';

/** What the spans are made with. */
export interface RunSpanOptions {
  readonly tracer: Tracer;
  readonly recordContent: boolean;
  readonly agentName: string;
}

/** A run's open span and what its children need. */
interface OpenRun {
  readonly span: Span;
  readonly context: Context;
  /** Text streamed since the last model call ended (only kept with `recordContent`). */
  output: string;
}

/** Messages that waited behind a run (or a debounce) before theirs started: the ones given a queue-wait span. */
const waitingDispositions: ReadonlySet<string> = new Set(['queued', 'collected', 'interrupted']);

/** The span event of a global-lane wait, announced before its run starts. */
const laneWaited = 'agentlanes.lane.waited';

/**
 * The spans of the runs in flight, built from their events: a run span (`invoke_agent`) with a child per model
 * call (`chat {model}`), per tool call (`execute_tool {name}`), per compaction and per queued message's wait, and
 * span events for failover, cooldowns, lane waits and approvals. Times come from the events (`at`), so spans are
 * as long as the work was, however late the events are read.
 */
export class RunSpans {
  private readonly runs = new Map<string, OpenRun>();
  private readonly tools = new Map<string, Span>();
  private readonly compactions = new Map<string, Span>();
  private readonly received = new ReceivedMessages();
  /** The last span of each paused run, linked from the span that resumes it. */
  private readonly paused = new Map<string, Span>();
  /** Lane waits of runs not started yet, by run id. */
  private readonly early = new Map<string, { readonly at: number; readonly attributes: Attributes }>();

  constructor(private readonly options: RunSpanOptions) {}

  messageReceived(event: EventOf<'message.received'>): void {
    this.received.add(event.sessionKey, {
      messageId: event.messageId,
      at: event.at,
      disposition: event.disposition,
      text: this.options.recordContent ? event.text : undefined,
      traceparent: event.traceparent,
    });
  }

  runStarted(event: EventOf<'run.started'>): void {
    const received = this.received.take(event.sessionKey, event.messageIds);
    // The run is a child of the span that sent its first message (when the sender passed its trace context), and
    // links to those that sent the others.
    const senders = received.flatMap((message) => spanContextOf(message.traceparent) ?? []);
    const [parent, ...others] = senders;
    const run = this.openRun(
      event,
      {
        [genAi.providerName]: event.provider,
        [genAi.system]: event.provider,
        [genAi.requestModel]: event.model,
      },
      { parent, links: others.map((span) => ({ context: span })) },
    );
    if (run === undefined) return;
    const texts: string[] = [];
    for (const message of received) {
      if (message.text !== undefined) texts.push(message.text);
      // A message that started its run waited only if the run waited for a global-lane slot.
      const waited = waitingDispositions.has(message.disposition) || event.at > message.at;
      if (waited) this.queueWait(run, message, event.at);
    }
    if (this.options.recordContent) run.span.setAttribute(genAi.inputMessages, userMessages(texts));
  }

  /** Steer messages taken into a running run: an event on its span (their text too, when content is recorded). */
  messagesAdmitted(event: EventOf<'message.admitted'>): void {
    const taken = this.received.take(event.sessionKey, event.messageIds);
    const run = this.run(event.runId);
    if (run === undefined) return;
    const texts = taken.flatMap((message) => (message.text === undefined ? [] : [message.text]));
    const attributes = defined({
      [agentlanes.messageIds]: [...event.messageIds],
      [genAi.inputMessages]: this.options.recordContent ? userMessages(texts) : undefined,
    });
    run.span.addEvent('agentlanes.message.admitted', attributes, timeOf(event.at));
  }

  /** A message that will never run (dropped by the queue cap): forgotten. */
  messageDropped(event: EventOf<'message.dropped'>): void {
    this.received.take(event.sessionKey, [event.messageId]);
  }

  runResumed(event: EventOf<'run.resumed'>): void {
    const attributes = defined({
      [agentlanes.resumedFrom]: event.from,
      [agentlanes.resumeReason]: event.reason,
      [agentlanes.resumeAttempt]: event.attempt,
    });
    const open = this.run(event.runId);
    // A run cut by a crash or a worker's death goes on under the same id (here, or on the worker taking over).
    if (open !== undefined) open.span.addEvent('agentlanes.run.resumed', attributes, timeOf(event.at));
    else this.openRun(event, attributes);
  }

  runPaused(event: EventOf<'run.paused'>): void {
    const run = this.closeRun(event.runId, event.at);
    if (run === undefined || event.runId === undefined) return;
    run.span.setAttribute(agentlanes.pausedIn, event.state);
    run.span.end(timeOf(event.at));
    this.paused.set(event.runId, run.span);
  }

  runEnded(event: EventOf<'run.ended'>): void {
    if (event.runId !== undefined) {
      this.paused.delete(event.runId);
      this.early.delete(event.runId);
    }
    const run = this.closeRun(event.runId, event.at);
    if (run === undefined) return;
    const { span } = run;
    span.setAttributes({
      [agentlanes.runStatus]: event.status,
      [genAi.inputTokens]: event.usage.inputTokens,
      [genAi.outputTokens]: event.usage.outputTokens,
    });
    if (this.options.recordContent)
      span.setAttribute(genAi.outputMessages, assistantMessage(event.text, undefined));
    if (event.error !== undefined) failed(span, event.error.code);
    span.end(timeOf(event.at));
  }

  /** A model call that answered: its span runs from the successful attempt's start to its report. */
  modelCalled(event: EventOf<'cost.updated'>): void {
    const run = this.runOf(event);
    if (run === undefined) return;
    const span = this.options.tracer.startSpan(
      `chat ${event.model}`,
      {
        kind: SpanKind.CLIENT,
        startTime: timeOf(event.startedAt ?? event.at),
        attributes: defined({
          [genAi.operationName]: 'chat',
          [genAi.providerName]: event.provider,
          [genAi.system]: event.provider,
          [genAi.requestModel]: event.model,
          [genAi.inputTokens]: event.inputTokens,
          [genAi.outputTokens]: event.outputTokens,
          [genAi.responseFinishReasons]: event.finishReason === undefined ? undefined : [event.finishReason],
          [agentlanes.profileId]: event.profileId,
          [agentlanes.cost]: event.cost,
        }),
      },
      run.context,
    );
    if (this.options.recordContent) {
      span.setAttribute(genAi.outputMessages, assistantMessage(run.output, event.finishReason));
    }
    run.output = '';
    span.end(timeOf(event.at));
  }

  assistantDelta(event: EventOf<'assistant.delta'>): void {
    const run = this.run(event.runId);
    if (run !== undefined && this.options.recordContent) run.output += event.delta;
  }

  toolCalled(event: EventOf<'tool.called'>): void {
    const run = this.runOf(event);
    if (run === undefined || event.runId === undefined) return;
    const attributes = defined({
      [genAi.operationName]: 'execute_tool',
      [genAi.toolName]: event.tool,
      [genAi.toolCallId]: event.toolCallId,
      [agentlanes.stepId]: event.stepId,
      [genAi.toolArguments]: this.options.recordContent ? jsonAttribute(event.args) : undefined,
    });
    const span = this.options.tracer.startSpan(
      `execute_tool ${event.tool}`,
      { kind: SpanKind.INTERNAL, startTime: timeOf(event.at), attributes },
      run.context,
    );
    this.tools.set(toolKey(event.runId, event.toolCallId), span);
  }

  toolSettled(event: EventOf<'tool.succeeded'> | EventOf<'tool.failed'>): void {
    if (event.runId === undefined) return;
    const key = toolKey(event.runId, event.toolCallId);
    const span = this.tools.get(key);
    if (span === undefined) return;
    this.tools.delete(key);
    if (event.type === 'tool.failed') failed(span, event.error.code);
    else if (this.options.recordContent) span.setAttribute(genAi.toolResult, jsonAttribute(event.output));
    span.end(timeOf(event.at));
  }

  /** A call found after a crash with no recorded outcome: its span (when this tracer saw it start) ends in doubt. */
  toolInDoubt(event: EventOf<'tool.in_doubt'>): void {
    if (event.runId === undefined) return;
    const key = toolKey(event.runId, event.toolCallId);
    const span = this.tools.get(key);
    this.tools.delete(key);
    span?.setAttribute(agentlanes.inDoubt, true);
    span?.end(timeOf(event.at));
    const attributes = { [genAi.toolName]: event.tool, [genAi.toolCallId]: event.toolCallId };
    this.run(event.runId)?.span.addEvent('agentlanes.tool.in_doubt', attributes, timeOf(event.at));
  }

  compactionStarted(event: EventOf<'compaction.started'>): void {
    const run = this.runOf(event);
    if (run === undefined || event.runId === undefined) return;
    const span = this.options.tracer.startSpan(
      'agentlanes.compaction',
      { startTime: timeOf(event.at), attributes: { 'agentlanes.compaction.attempt': event.attempt } },
      run.context,
    );
    this.compactions.get(event.runId)?.end(timeOf(event.at));
    this.compactions.set(event.runId, span);
  }

  compactionEnded(event: EventOf<'compaction.ended'>): void {
    if (event.runId === undefined) return;
    const span = this.compactions.get(event.runId);
    this.compactions.delete(event.runId);
    span?.setAttributes({ 'agentlanes.compaction.truncated': event.truncated });
    span?.end(timeOf(event.at));
  }

  /** A moment in a run worth seeing on its span (a failover, a cooldown, a lane wait): a span event. */
  mark(runId: string | undefined, name: string, at: number, attributes: Attributes): void {
    const run = this.run(runId);
    if (run === undefined) {
      // A run waits in the global lane before it starts: the wait goes on its span once it opens.
      if (runId !== undefined && name === laneWaited) this.early.set(runId, { at, attributes });
      return;
    }
    run.span.addEvent(name, attributes, timeOf(at));
    // A failed attempt's streamed text is not the answer of the call that follows it.
    if (name.startsWith('agentlanes.failover.')) run.output = '';
  }

  /** End every open span now, marked cut: tracing stops while they are in flight. */
  endAll(): void {
    for (const span of [...this.tools.values(), ...this.compactions.values()]) cut(span);
    for (const run of this.runs.values()) cut(run.span);
    this.tools.clear();
    this.compactions.clear();
    this.runs.clear();
    this.paused.clear();
    this.early.clear();
  }

  private run(runId: string | undefined): OpenRun | undefined {
    return runId === undefined ? undefined : this.runs.get(runId);
  }

  /**
   * The run's open span, or one opened now (marked partial) for a run whose start was not seen: tracing began
   * during it, or the cluster worker tracing before was lost and this one reads on from where it stopped.
   */
  private runOf(event: RuntimeEvent): OpenRun | undefined {
    const open = this.run(event.runId);
    if (open !== undefined || event.runId === undefined) return open;
    return this.openRun(event, { [agentlanes.partial]: true });
  }

  private openRun(
    event: RuntimeEvent,
    attributes: Attributes,
    from: { readonly parent?: SpanContext | undefined; readonly links?: Link[] } = {},
  ): OpenRun | undefined {
    if (event.runId === undefined) return undefined;
    const { agentName, tracer } = this.options;
    // A run paused here earlier continues in a new span that links to the one that ended at the pause.
    const before = this.paused.get(event.runId);
    this.paused.delete(event.runId);
    const links = [
      ...(before === undefined ? [] : [{ context: before.spanContext() }]),
      ...(from.links ?? []),
    ];
    const parent = from.parent === undefined ? ROOT_CONTEXT : trace.setSpanContext(ROOT_CONTEXT, from.parent);
    const span = tracer.startSpan(
      `invoke_agent ${agentName}`,
      {
        kind: SpanKind.INTERNAL,
        startTime: timeOf(event.at),
        links,
        attributes: {
          [genAi.operationName]: 'invoke_agent',
          [genAi.agentName]: agentName,
          [genAi.conversationId]: event.sessionKey,
          [agentlanes.sessionKey]: event.sessionKey,
          [agentlanes.runId]: event.runId,
          ...attributes,
        },
      },
      parent,
    );
    const run: OpenRun = { span, context: trace.setSpan(ROOT_CONTEXT, span), output: '' };
    this.runs.set(event.runId, run);
    const waited = this.early.get(event.runId);
    this.early.delete(event.runId);
    if (waited !== undefined) span.addEvent(laneWaited, waited.attributes, timeOf(waited.at));
    return run;
  }

  /** Forget a run's span and end what is still open under it (a tool cut off by an abort, a compaction). */
  private closeRun(runId: string | undefined, at: number): OpenRun | undefined {
    const run = this.run(runId);
    if (run === undefined || runId === undefined) return undefined;
    this.runs.delete(runId);
    for (const [key, span] of this.tools) {
      if (!key.startsWith(`${runId}\u0000`)) continue;
      this.tools.delete(key);
      span.end(timeOf(at));
    }
    this.compactions.get(runId)?.end(timeOf(at));
    this.compactions.delete(runId);
    return run;
  }

  private queueWait(run: OpenRun, received: ReceivedMessage, startedAt: number): void {
    const span = this.options.tracer.startSpan(
      'agentlanes.queue_wait',
      {
        kind: SpanKind.INTERNAL,
        startTime: timeOf(received.at),
        attributes: {
          [agentlanes.messageId]: received.messageId,
          [agentlanes.disposition]: received.disposition,
          [agentlanes.waitedMs]: Math.max(0, startedAt - received.at),
        },
      },
      run.context,
    );
    span.end(timeOf(startedAt));
  }
}

function toolKey(runId: string, toolCallId: string): string {
  return `${runId}\u0000${toolCallId}`;
}

function failed(span: Span, code: string): void {
  span.setAttribute(genAi.errorType, code);
  span.setStatus({ code: SpanStatusCode.ERROR, message: code });
}

function cut(span: Span): void {
  span.setAttribute(agentlanes.cut, true);
  span.end();
}

/** An event's time (epoch milliseconds from the runtime's clock) as a span time: a Date, never read as a
 * performance-clock offset (the SDK takes a small number for one). */
function timeOf(at: number): Date {
  return new Date(at);
}
