import { parseStoreSpec } from '../src/index.js';
import { createAgentWorker } from '../worker/index.js';
import { loadAgents } from './agent-module.js';
import { parseFlags, TEMPORAL_OPTIONS } from './flags.js';
import { ENV, setting, temporalSettings } from './settings.js';
import { openStore } from './store-flag.js';
import { connectWorker } from './temporal-connection.js';
import { UsageError } from './usage-error.js';

export const WORKER_HELP = `Usage: chamvi worker --agents <module> --store <sqlite path | postgres url> [options]

Runs a Temporal worker for the agents a module exports, recording effects in the given store.
Every worker of a task queue must share one store (PostgreSQL across machines).

Options:
  --agents <module>       module exporting agents (defineAgent results), or a default array of
                          agents or { agent, tools, toolDefaults, allow } registrations   [${ENV.agents}]
  --store <spec>          effect store: ./effects.db, sqlite:effects.db, postgres://user@host/db [${ENV.store}]
  --task-queue <queue>    task queue to poll (default chamvi)                         [${ENV.taskQueue}]
  --address <host:port>   Temporal frontend (default localhost:7233)                  [${ENV.address}]
  --namespace <ns>        Temporal namespace (default default)                        [${ENV.namespace}]
  -h, --help              show this help

Prints "ready" once it polls. Stops cleanly on SIGINT or SIGTERM.`;

function describeStore(spec: string): string {
  const parsed = parseStoreSpec(spec);
  if (parsed.kind === 'postgres') {
    const url = new URL(parsed.url);
    return `postgres ${url.hostname}:${url.port || '5432'}${url.pathname}`;
  }
  return parsed.kind === 'sqlite' ? `sqlite ${parsed.path}` : parsed.kind;
}

export async function workerCommand(args: string[]): Promise<number> {
  const { values } = parseFlags(
    'worker',
    args,
    { ...TEMPORAL_OPTIONS, agents: { type: 'string' }, store: { type: 'string' } },
    0,
  );
  if (values.help) {
    process.stdout.write(`${WORKER_HELP}\n`);
    return 0;
  }
  const agentsModule = setting(values.agents, ENV.agents);
  if (agentsModule === undefined)
    throw new UsageError(`worker: --agents is required (or set ${ENV.agents}) (see chamvi worker --help)`);
  const { address, namespace, taskQueue } = temporalSettings(values);
  const store = await openStore('worker', values.store);
  try {
    const agents = await loadAgents('worker', agentsModule);
    const connection = await connectWorker(address);
    try {
      const worker = await createAgentWorker({ connection, namespace, taskQueue, agents, store });
      const names = agents.map((a) =>
        'agent' in a && typeof a.agent === 'object' ? a.agent.name : (a as { name: string }).name,
      );
      process.stdout.write(
        `chamvi worker: task queue "${taskQueue}" at ${address} (namespace ${namespace}); agents: ${names.join(', ')}; ` +
          `effect store: ${describeStore(setting(values.store, ENV.store) ?? '')}\nready\n`,
      );
      await worker.run();
      process.stdout.write('chamvi worker: stopped\n');
    } finally {
      await connection.close();
    }
  } finally {
    await store.close();
  }
  return 0;
}
