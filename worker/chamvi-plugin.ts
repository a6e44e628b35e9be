import { SimplePlugin } from '@temporalio/plugin';
import { createChamviActivities, type ChamviActivitiesOptions } from '../activities/index.js';
import { chamviWorkflowsPath } from './workflows-path.js';

/** What {@link chamviPlugin} takes: the activities' options, and optionally your own workflows. */
export interface ChamviPluginOptions extends ChamviActivitiesOptions {
  /**
   * Your workflow entry point, when you run agents from your own workflows (it must export
   * `agentWorkflow` too if you also start the generic one). Default: the library's workflows.
   * `false` leaves workflows to the worker's own options (a prebuilt `workflowBundle`, say).
   */
  readonly workflowsPath?: string | false;
}

/**
 * A Temporal worker plugin that registers the agent activities (model step, effect call, tool
 * call, effect store) for `agents` against `store`, and bundles the agent workflows unless the
 * worker already sets a `workflowsPath`.
 *
 * ```ts
 * const worker = await Worker.create({ connection, taskQueue, plugins: [chamviPlugin({ agents: [responder], store })] });
 * ```
 */
export function chamviPlugin(options: ChamviPluginOptions): SimplePlugin {
  const activities = createChamviActivities(options);
  return new SimplePlugin({
    name: 'chamvi',
    activities: (existing) => ({ ...(existing ?? {}), ...activities }),
    workflowsPath: (existing) =>
      options.workflowsPath === false
        ? (existing as string)
        : (existing ?? options.workflowsPath ?? chamviWorkflowsPath()),
  });
}
