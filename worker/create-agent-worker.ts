import { NativeConnection, Worker, type WorkerOptions, type WorkerPlugin } from '@temporalio/worker';
import type { ManagedEffectStore } from '../src/stores/create-effect-store.js';
import type { IEffectStore } from '../src/stores/effect-store.js';
import { createRunStreamStore } from '../src/stream/create-run-stream-store.js';
import type { RunStreamStore } from '../src/stream/run-stream-store.js';
import { chamviPlugin, type ChamviPluginOptions } from './chamvi-plugin.js';
import { resolveTemporalConnection } from './connection-settings.js';
import { checkEffectStore } from './effect-store-check.js';
import { workerHealthFromEnv, workerHealthPlugin, type WorkerHealthOptions } from './worker-health.js';

/** What {@link createAgentWorker} takes. @public */
export interface AgentWorkerOptions extends Omit<ChamviPluginOptions, 'store' | 'stream'> {
  /** The task queue the worker polls (runs start on it: `startAgentRun({ taskQueue })`). */
  readonly taskQueue: string;
  /**
   * Where effect results are recorded: a store, or a spec the worker opens with
   * `createEffectStore` (an SQLite path such as `.chamvi/effects.db`, `sqlite:…`, `postgres://…`,
   * `memory:`) and closes when its run ends. Either way it is read once before the worker is
   * created, so a store that cannot be opened fails the start with `EffectStoreUnavailableError`
   * naming it (an absolute file path, or the URL with its password masked).
   */
  readonly store: IEffectStore | string;
  /**
   * Read the store once before the worker is created (default `true`). `false` is for tests whose
   * store is meant to fail (a `FlakyEffectStore`); a real worker should always check.
   */
  readonly checkStore?: boolean;
  /**
   * Stream the model steps to the user's screen: where each step writes its text, reasoning and
   * tool-call deltas as they arrive (readers: `runUIMessageStream`, `readRunStream` from
   * `@chamvi/temporal/client`). A store, a spec the worker opens and closes itself (the forms of
   * `store`: `postgres://…` wakes readers with LISTEN/NOTIFY, an SQLite path makes them poll), or
   * `true` for the same place as `store` (which must then be a spec). Default: no stream; the
   * steps call the model with `generateText` as without this option.
   * @beta @experimental
   */
  readonly stream?: RunStreamStore | string | true;
  /**
   * A connection to the Temporal server; default: a new one as {@link resolveTemporalConnection}
   * resolves it (`profile`, `configFile`, the `TEMPORAL_*` variables, `address`), closed when the
   * run ends.
   */
  readonly connection?: NativeConnection;
  /** Used when no connection is given: wins over the profile and `TEMPORAL_ADDRESS`. Default `localhost:7233`. */
  readonly address?: string;
  /** The namespace. Default: the profile's, else `TEMPORAL_NAMESPACE`, else `default`. */
  readonly namespace?: string;
  /** The `@temporalio/envconfig` profile to connect with (TLS, API key, Temporal Cloud). Default `TEMPORAL_PROFILE`. */
  readonly profile?: string;
  /** The TOML config file of the profiles. Default `TEMPORAL_CONFIG_FILE`, else the user's `temporalio/temporal.toml`. */
  readonly configFile?: string;
  /**
   * Serve `GET /health` while the worker runs (see `workerHealthPlugin`). Default: the port in
   * `CHAMVI_HEALTH_PORT` (host `CHAMVI_HEALTH_HOST`, default `127.0.0.1`) when set, else none;
   * `false` turns it off whatever the environment says.
   */
  readonly health?: WorkerHealthOptions | false;
  /** Anything else for `Worker.create` (concurrency, interceptors, a prebuilt workflow bundle, ...). */
  readonly workerOptions?: Partial<WorkerOptions>;
}

/**
 * Creates a Temporal worker that runs the given agents: a convenience over {@link chamviPlugin},
 * which does the work (activities, workflows, External Storage). It opens what its options name
 * (a connection from `address` / `profile` / the `TEMPORAL_*` variables, a store or a stream given
 * as a spec), reads the store once, and calls `Worker.create({ ...workerOptions, connection,
 * taskQueue, plugins: [...workerOptions.plugins, health, chamviPlugin(options)] })`. A worker you
 * create yourself gets the same agents with `plugins: [chamviPlugin({ agents, store })]`. Run it with
 * `worker.run()` or `worker.runUntil(promise)`; what it opened itself is closed when that run ends.
 *
 * @throws EffectStoreUnavailableError when the store cannot be opened; nothing else is started then.
 * @throws InvalidApprovalSecretError when `approvalSecret` (or `CHAMVI_APPROVAL_SECRET`) is under 16 bytes.
 * @throws WorkerHealthError for an unusable `CHAMVI_HEALTH_PORT`.
 * @public
 */
export async function createAgentWorker(options: AgentWorkerOptions): Promise<Worker> {
  const health = options.health === false ? undefined : (options.health ?? workerHealthFromEnv());
  const checked = await checkEffectStore(options.store, { read: options.checkStore !== false });
  const owned: Array<() => Promise<void>> = [];
  if (checked.owned) owned.push(() => (checked.store as ManagedEffectStore).close());
  try {
    const stream = openStream(options);
    if (stream !== undefined && typeof options.stream !== 'object') owned.push(() => stream.close());
    const resolved =
      options.connection === undefined
        ? resolveTemporalConnection({
            ...(options.profile !== undefined ? { profile: options.profile } : {}),
            ...(options.configFile !== undefined ? { configFile: options.configFile } : {}),
            ...(options.address !== undefined ? { address: options.address } : {}),
            ...(options.namespace !== undefined ? { namespace: options.namespace } : {}),
          })
        : undefined;
    const connection = options.connection ?? (await NativeConnection.connect(resolved?.connectionOptions ?? {}));
    if (options.connection === undefined) owned.unshift(() => connection.close());
    const { workerOptions = {} } = options;
    const plugin = chamviPlugin({
      ...options,
      store: checked.store,
      ...(stream !== undefined ? { stream } : { stream: undefined }),
      ...(workerOptions.workflowBundle !== undefined ? { workflowsPath: false } : {}),
    });
    return await Worker.create({
      ...workerOptions,
      connection,
      taskQueue: options.taskQueue,
      ...(options.namespace !== undefined
        ? { namespace: options.namespace }
        : resolved !== undefined
          ? { namespace: resolved.namespace }
          : {}),
      plugins: [
        // First, so it wraps the others: what it closes outlives the health endpoint and the run.
        ...(owned.length > 0 ? [closeWhenDone(owned)] : []),
        ...(workerOptions.plugins ?? []),
        ...(health !== undefined ? [workerHealthPlugin(health)] : []),
        plugin,
      ],
    });
  } catch (error) {
    for (const close of owned) await close().catch(() => undefined);
    throw error;
  }
}

/** The run stream of `options.stream`: the store given, or one opened from its spec (`true`: the effect store's). */
function openStream(options: AgentWorkerOptions): RunStreamStore | undefined {
  const { stream } = options;
  if (stream === undefined || typeof stream === 'object') return stream;
  if (stream === true && typeof options.store !== 'string') {
    throw new TypeError(
      'createAgentWorker: stream: true means "where the effect store is", which needs the store as a spec string; pass a stream spec or store instead.',
    );
  }
  return createRunStreamStore(stream === true ? (options.store as string) : stream);
}

function closeWhenDone(resources: ReadonlyArray<() => Promise<void>>): WorkerPlugin {
  return {
    name: 'chamvi.owned-resources',
    async runWorker(worker, next) {
      try {
        await next(worker);
      } finally {
        // The connection first: the worker has shut down, nothing uses it any more.
        for (const close of resources) await close().catch(() => undefined);
      }
    },
  };
}
