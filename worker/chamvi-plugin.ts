import { SimplePlugin, type SimplePluginOptions } from '@temporalio/plugin';
import type { BundleOptions, InjectedSinks, ReplayWorkerOptions, WorkerOptions } from '@temporalio/worker';
import { runTraceSinks } from '../activities/tracing/run-trace-sinks.js';
import type { RunTraceSinks } from '../common/run-trace.js';
import { createChamviActivities } from '../activities/index.js';
import type { AgentEntry } from '../activities/agent-registry.js';
import type { IEffectStore } from '../src/stores/effect-store.js';
import type { ConversationStore } from '../src/stores/conversation-store.js';
import type { RunStreamStore } from '../src/stream/run-stream-store.js';
import { conversationStoreOf } from '../activities/conversation-store-of.js';
import {
  chamviExternalStorage,
  externalStorageProblem,
  type ChamviExternalStorageOptions,
} from './store-storage-driver.js';
import { chamviWorkflowsPath } from './workflows-path.js';

/** What {@link chamviPlugin} takes: the agents and their store, and optionally your own workflows. @public */
export interface ChamviPluginOptions {
  /** The agents this worker runs (by their names). */
  readonly agents: readonly AgentEntry[];
  /** Where effect results are recorded; shared by every worker of the task queue in production. */
  readonly store: IEffectStore;
  /**
   * How long an effect key stays claimed after its attempt was cancelled or timed out while the
   * tool's `execute` still runs, in ms. Default 120 000. Until then a retry on another worker waits
   * and finds the record; past it the claim is released with a warning, and a retry may apply the
   * effect again (an `execute` that ignores its abort signal past this bound is not protected).
   * A whole number from 0 to 2^31 - 1; anything else (`NaN`, -1, `Infinity`) is refused with
   * `InvalidOptionError` when the plugin (or `createAgentWorker`) is created.
   */
  readonly abortGraceMs?: number;
  /**
   * The secret approval tokens are signed with: at least 16 bytes (32 random ones are best,
   * `openssl rand -base64 32`). Default: the `CHAMVI_APPROVAL_SECRET` environment variable, read
   * when the activities are created; without one, every approval decision is refused. A shorter
   * secret fails the plugin (and `createAgentWorker`) with `InvalidApprovalSecretError`.
   */
  readonly approvalSecret?: string | Uint8Array;
  /**
   * Where the runs' conversations are kept (entries the model steps write and the tool calls read).
   * Default: `store`, which every store this library ships can do; a custom store without it
   * gets one in this process's memory (the runs then work on one worker process only).
   */
  readonly conversationStore?: ConversationStore;
  /**
   * Where model steps write what they stream (text, reasoning, tool-call deltas) for readers such
   * as `runUIMessageStream`. Absent (the default): steps call the model with `generateText` and
   * stream nothing.
   * @beta @experimental
   */
  readonly stream?: RunStreamStore;
  /**
   * Your workflow entry point, when you run agents from your own workflows (it must export
   * `agentWorkflow` too if you also start the generic one). Default: the library's workflows.
   * `false` leaves workflows to the worker's own options (a prebuilt `workflowBundle`, say).
   */
  readonly workflowsPath?: string | false;
  /**
   * Temporal External Storage for large payloads (a big tool result, a big prompt), kept in the
   * workers' store: payloads of `thresholdBytes` (default 32 KiB) and more travel as a reference,
   * so no payload reaches Temporal's 2 MiB limit and the history stays small. On by default when
   * the store is shared (SQLite, PostgreSQL; not the memory store) and the installed Temporal SDK
   * has External Storage (1.24 and later); a data converter that already has `externalStorage`
   * (your S3 or GCS drivers) is kept as it is. `false` turns it off. Clients that read such runs
   * need the same: `chamviDataConverter(store)`.
   * @beta @experimental
   */
  readonly externalStorage?: ChamviExternalStorageOptions | false;
}

/**
 * A Temporal worker plugin that registers the agent activities (model step, effect call, tool
 * call, effect store) for `agents` against `store`, and bundles the agent workflows unless the
 * worker already sets a `workflowsPath`.
 *
 * ```ts
 * const worker = await Worker.create({ connection, taskQueue, plugins: [chamviPlugin({ agents: [responder], store })] });
 * ```
 *
 * @throws InvalidOptionError for an `abortGraceMs` that is not a whole number of ms from 0 to 2^31 - 1.
 * @throws InvalidApprovalSecretError when `approvalSecret` (or `CHAMVI_APPROVAL_SECRET`) is under 16 bytes.
 * @public
 */
export function chamviPlugin(options: ChamviPluginOptions): SimplePlugin {
  const conversations = conversationStoreOf(options);
  // Set once the worker's data converter is known: an effect result over the payload limit is then offloaded, not refused.
  let offloads = false;
  const activities = createChamviActivities({
    ...options,
    conversationStore: conversations.store,
    offloadsLargePayloads: () => offloads,
  });
  // In one process's memory the payloads would be lost to every other worker: offload only to a shared store.
  const wanted = options.externalStorage !== false && conversations.shared;
  const problem = wanted ? externalStorageProblem() : undefined;
  if (problem !== undefined) {
    console.warn(
      `[chamvi] External Storage is off: ${problem}. Until then large payloads stay in the event history, and an effect result over 2 MiB fails with EffectResultTooLargeError.`,
    );
  }
  const storage =
    wanted && problem === undefined
      ? chamviExternalStorage(conversations.store, options.externalStorage || {})
      : undefined;
  return new ChamviPlugin(runTraceSinks(options.agents), {
    name: 'chamvi',
    dataConverter: (existing) => {
      if (existing?.externalStorage !== undefined || storage === undefined) {
        offloads = existing?.externalStorage !== undefined;
        return existing ?? {};
      }
      offloads = true;
      return { ...existing, externalStorage: storage };
    },
    activities: (existing) => ({ ...(existing ?? {}), ...activities }),
    workflowsPath: (existing) =>
      options.workflowsPath === false
        ? (existing as string)
        : (existing ?? options.workflowsPath ?? chamviWorkflowsPath()),
  });
}

/** The plugin, with the sink the agent workflow reports its runs' traces to (see `run-trace-sinks.ts`). */
class ChamviPlugin extends SimplePlugin {
  constructor(
    private readonly sinks: InjectedSinks<RunTraceSinks>,
    options: SimplePluginOptions,
  ) {
    super(options);
  }

  override configureWorker(options: WorkerOptions): WorkerOptions {
    return super.configureWorker({ ...options, sinks: { ...options.sinks, ...this.sinks } });
  }

  override configureReplayWorker(options: ReplayWorkerOptions): ReplayWorkerOptions {
    return super.configureReplayWorker({ ...options, sinks: { ...options.sinks, ...this.sinks } });
  }

  /**
   * Preloads the library's workflow modules into the reusable V8 context: they are evaluated once
   * per workflow thread and shared, instead of once per workflow run. They hold no state of a run
   * (every module-level value is a constant, a definition or a proxy), which is what sharing
   * requires; Temporal freezes what they export. Temporal SDKs before 1.24 have no
   * `preloadModules` and ignore it; a worker with `reuseV8Context: false` evaluates them per run
   * as before.
   */
  override configureBundler(options: BundleOptions): BundleOptions {
    return super.configureBundler({
      ...options,
      preloadModules: [...(options.preloadModules ?? []), chamviWorkflowsPath()],
    });
  }
}
