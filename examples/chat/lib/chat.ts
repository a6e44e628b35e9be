import { chatRoute, createAgentClient, createRunStreamStore, type ChatRoute } from '@chamvi/temporal/client';
import { createEffectStore } from '@chamvi/temporal/stores';

let route: Promise<ChatRoute> | undefined;

/**
 * The chat's route handlers over the workers' store and task queue, connected on first use
 * (`next build` loads this module without a Temporal server to connect to), and again after a
 * failed connection.
 */
export function chat(): Promise<ChatRoute> {
  route ??= connect().catch((error: unknown) => {
    route = undefined;
    throw error;
  });
  return route;
}

async function connect(): Promise<ChatRoute> {
  const client = await createAgentClient();
  const store = required('CHAMVI_STORE');
  return chatRoute({
    client,
    stream: createRunStreamStore(store),
    conversations: createEffectStore(store),
    agent: required('CHAT_AGENT'),
    taskQueue: required('CHAT_TASK_QUEUE'),
    approver: () => 'chat page',
    // A killed worker's streaming step is retried once 2 s pass without its heartbeat (default 30 s).
    run: { activityOptions: { modelStep: { heartbeatTimeout: '2 seconds', retry: { initialInterval: '200 ms' } } } },
  });
}

function required(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '')
    throw new Error(`The chat app needs ${name}: start it with npm run example:chat.`);
  return value;
}
