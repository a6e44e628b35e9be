import { randomUUID } from 'node:crypto';
import { redirect } from 'next/navigation';
import { chat } from '../lib/chat';
import { Chat } from './chat';
import { Tracker } from './tracker';

/** One chat per URL (`/?chat=<id>`): a reload opens the same chat from the workers' store. */
export default async function Page({ searchParams }: { searchParams: Promise<{ chat?: string | string[] }> }) {
  const { chat: chatId } = await searchParams;
  if (typeof chatId !== 'string') redirect(`/?chat=chat-${randomUUID()}`);
  // Your session check goes here: messages() reads any chat it is given.
  const messages = await (await chat()).messages(chatId);
  return (
    <div className="layout">
      <Chat id={chatId} messages={messages} />
      <Tracker />
    </div>
  );
}
