import type { Client } from '@temporalio/client';
import type { UIMessageChunk } from 'ai';
import { hasConversationStore, type IEffectStore } from '../../src/index.js';

import { progressUIMessageStream } from './progress-ui-stream.js';

/**
 * A run's AI SDK UI message stream from its start, for the page: built from the run's progress and
 * the conversation in the workers' store (a step's text once the step is stored).
 */
export function openRunStream(options: {
  readonly client: Client;
  readonly store: IEffectStore;
  readonly workflowId: string;
}): ReadableStream<UIMessageChunk> {
  const { client, store, workflowId } = options;
  if (!hasConversationStore(store)) throw new TypeError('the chat example needs a store that keeps conversations');
  return progressUIMessageStream({ client, store, workflowId });
}
