/**
 * The page of the useChat browser test: an unmodified `useChat` (`@ai-sdk/react`) on the chat route, as the
 * README shows it, with approvals, deferred results, resume, regenerate and stop. Bundled by esbuild at test time
 * (no JSX and no DOM types here: the project's typecheck is Node's; the browser bits are reached through
 * `globalThis`). The test drives it through `window.chatActions` and reads what it renders.
 */
import { useChat } from '@ai-sdk/react';
import {
  DefaultChatTransport,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  lastAssistantMessageIsCompleteWithToolCalls,
  type UIMessage,
} from 'ai';
import { createElement, useEffect } from 'react';
import { createRoot } from 'react-dom/client';

/** The few browser globals the page uses. */
interface PageGlobals {
  location: { search: string };
  document: { getElementById(id: string): unknown };
  chatActions?: Record<string, (...args: never[]) => unknown>;
}

const page = globalThis as unknown as PageGlobals;
const query = new URLSearchParams(page.location.search);
const sessionKey = query.get('session') ?? 'web:chat';
const token = query.get('token') ?? '';
const api = `/v1/sessions/${encodeURIComponent(sessionKey)}/chat`;

/** One part, rendered with its type and state so the test reads what the page shows. */
function renderPart(part: UIMessage['parts'][number], index: number) {
  const state = 'state' in part ? String(part.state) : '';
  const text =
    part.type === 'text' || part.type === 'reasoning'
      ? part.text
      : 'output' in part && part.output !== undefined
        ? JSON.stringify(part.output)
        : '';
  return createElement('li', { key: index, 'data-type': part.type, 'data-state': state }, text);
}

function Chat() {
  const chat = useChat({
    id: 'chat-1',
    resume: true,
    transport: new DefaultChatTransport({ api, headers: { authorization: `Bearer ${token}` } }),
    // Post again once every call that waits has an answer: an approval decision, or a deferred tool's output.
    sendAutomaticallyWhen: (options) =>
      lastAssistantMessageIsCompleteWithApprovalResponses(options) ||
      lastAssistantMessageIsCompleteWithToolCalls(options),
  });
  const { messages, status, error } = chat;
  useEffect(() => {
    page.chatActions = {
      send: (text: string) => chat.sendMessage({ text }),
      approve: (id: string) => chat.addToolApprovalResponse({ id, approved: true }),
      reject: (id: string, reason: string) => chat.addToolApprovalResponse({ id, approved: false, reason }),
      supply: (toolCallId: string, tool: string, output: unknown) =>
        chat.addToolOutput({ tool, toolCallId, output }),
      regenerate: () => chat.regenerate(),
      // The stream's end does not stop the run (a reload must be able to resume it): stop asks the server too.
      stop: async () => {
        await fetch(`/v1/sessions/${encodeURIComponent(sessionKey)}/abort`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: '{}',
        });
        await chat.stop();
      },
    };
  });
  return createElement(
    'main',
    { id: 'chat', 'data-status': status, 'data-error': error?.message ?? '' },
    messages.map((message) =>
      createElement(
        'ol',
        { key: message.id, 'data-role': message.role, 'data-id': message.id },
        message.parts.filter((part) => part.type !== 'step-start').map(renderPart),
      ),
    ),
  );
}

createRoot(page.document.getElementById('root') as never).render(createElement(Chat));
