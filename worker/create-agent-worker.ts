import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { chamviPlugin, type ChamviPluginOptions } from './chamvi-plugin.js';

/** What {@link createAgentWorker} takes. */
export interface AgentWorkerOptions extends ChamviPluginOptions {
  readonly taskQueue: string;
  /** A connection to the Temporal server; default: a new one to `address`. */
  readonly connection?: NativeConnection;
  /** Used when no connection is given. Default `TEMPORAL_ADDRESS` or `localhost:7233`. */
  readonly address?: string;
  readonly namespace?: string;
  /** Anything else for `Worker.create` (concurrency, interceptors, a prebuilt workflow bundle, ...). */
  readonly workerOptions?: Partial<WorkerOptions>;
}

/**
 * Creates a Temporal worker that runs the given agents: it registers their activities and bundles
 * the agent workflows (through {@link chamviPlugin}). Run it with `worker.run()` or
 * `worker.runUntil(promise)`.
 */
export async function createAgentWorker(options: AgentWorkerOptions): Promise<Worker> {
  const connection =
    options.connection ??
    (await NativeConnection.connect({
      address: options.address ?? process.env['TEMPORAL_ADDRESS'] ?? 'localhost:7233',
    }));
  const { workerOptions = {} } = options;
  return Worker.create({
    ...workerOptions,
    connection,
    taskQueue: options.taskQueue,
    ...(options.namespace !== undefined ? { namespace: options.namespace } : {}),
    plugins: [
      ...(workerOptions.plugins ?? []),
      chamviPlugin(workerOptions.workflowBundle !== undefined ? { ...options, workflowsPath: false } : options),
    ],
  });
}
