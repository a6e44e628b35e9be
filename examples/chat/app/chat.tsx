'use client';
import { useChat } from '@ai-sdk/react';
import {
  DefaultChatTransport,
  isToolUIPart,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  type UIMessage,
} from 'ai';
import { useState } from 'react';
import { ToolCall } from './tool-call';

export function Chat({ id, messages: stored }: { id: string; messages: UIMessage[] }) {
  const { messages, sendMessage, addToolApprovalResponse, status, error } = useChat({
    id,
    messages: stored,
    resume: true,
    transport: new DefaultChatTransport({ api: '/api/chat' }),
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  });
  const [text, setText] = useState('');
  return (
    <main className="chat" data-status={status}>
      {messages.map((message) => (
        <article key={message.id} className={message.role} data-testid={message.role}>
          {message.parts.map((part, i) =>
            part.type === 'text' ? (
              <p key={i}>{part.text}</p>
            ) : isToolUIPart(part) ? (
              <ToolCall
                key={part.toolCallId}
                part={part}
                answer={(approved) => void addToolApprovalResponse({ id: part.approval?.id ?? '', approved })}
              />
            ) : null,
          )}
        </article>
      ))}
      {error && <p role="alert">{error.message}</p>}
      <form
        onSubmit={(event) => {
          event.preventDefault();
          void sendMessage({ text });
          setText('');
        }}
      >
        <input
          id="message"
          value={text}
          onChange={(e) => setText(e.target.value)}
          placeholder="Please answer issue #1."
        />
        <button id="send" disabled={status !== 'ready' || text.trim() === ''}>
          Send
        </button>
      </form>
    </main>
  );
}
