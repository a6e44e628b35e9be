import { agentConversation } from '../client/agent-conversation.js';
import { childRunLines, childRunsOf } from './child-run-lines.js';
import { compensatedEffects, compensationLines } from './compensation-lines.js';
import { chamviDataConverter } from '../worker/store-storage-driver.js';
import { loadDataConverter } from './data-converter-flag.js';
import { SHOW_HELP } from './help.js';
import { parseFlags, required, TEMPORAL_OPTIONS } from './flags.js';
import { temporalSettings } from './settings.js';
import { openStore } from './store-flag.js';
import { connectClient } from './temporal-connection.js';

/** One message as a line (or a few): its role, its text, its tool calls and results, long values cut. */
export function describeMessage(message: { readonly role: string; readonly content: unknown }, width = 160): string {
  const cut = (text: string) => (text.length > width ? `${text.slice(0, width - 1)}…` : text);
  if (typeof message.content === 'string') return `${message.role}: ${cut(message.content)}`;
  const parts = Array.isArray(message.content) ? (message.content as Array<Record<string, unknown>>) : [];
  const lines = parts.map((part) => {
    switch (part['type']) {
      case 'text':
      case 'reasoning':
        return cut(typeof part['text'] === 'string' ? part['text'] : '');
      case 'tool-call':
        return `→ ${String(part['toolName'])}(${cut(JSON.stringify(part['input'] ?? null))}) [${String(part['toolCallId'])}]`;
      case 'tool-result':
        return `← ${String(part['toolName'])}: ${cut(JSON.stringify(part['output'] ?? null))} [${String(part['toolCallId'])}]`;
      default:
        return `(${String(part['type'])})`;
    }
  });
  return `${message.role}: ${lines.join('\n  ')}`;
}

export async function showCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(
    'show',
    args,
    { ...TEMPORAL_OPTIONS, store: { type: 'string' }, json: { type: 'boolean' } },
    1,
  );
  if (values.help) {
    process.stdout.write(`${SHOW_HELP}\n`);
    return 0;
  }
  const workflowId = required('show', 'a workflow id', positionals[0], 'chamvi show <workflow id> --store <spec>');
  const store = await openStore('show', values.store);
  try {
    const settings = temporalSettings(values);
    const base = await loadDataConverter('show', values['data-converter']);
    // The workers offload large payloads to the store: the client reads them back from there.
    const dataConverter = chamviDataConverter(store, base === undefined ? {} : { base });
    const client = await connectClient(settings.address, settings.namespace, {
      connectionOptions: settings.connectionOptions,
      dataConverter,
    });
    try {
      const shown = await agentConversation(client, workflowId, store);
      const effects = await compensatedEffects(client, workflowId).catch(() => undefined);
      const compensations = compensationLines(effects ?? []);
      const children = await childRunsOf(client, workflowId).catch(() => []);
      if (values.json) {
        const whole = {
          ...shown,
          ...(compensations.length > 0 ? { effects } : {}),
          ...(children.length > 0 ? { children } : {}),
        };
        process.stdout.write(`${JSON.stringify(whole, null, 2)}\n`);
      } else {
        const head = `conversation of workflow ${workflowId} (run ${shown.runId}, ${shown.status.toLowerCase()}, from its ${shown.from}):`;
        const lines = [
          head,
          ...shown.messages.map((m) => describeMessage(m)),
          ...compensations,
          ...childRunLines(children),
        ];
        process.stdout.write(`${lines.join('\n')}\n`);
      }
      return 0;
    } finally {
      await client.connection.close();
    }
  } finally {
    await store.close();
  }
}
