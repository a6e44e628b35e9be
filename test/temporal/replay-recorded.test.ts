import { describe, expect, it } from '@jest/globals';
import { bundleWorkflowCode, Worker, type WorkflowBundle } from '@temporalio/worker';
import proto from '@temporalio/proto';
import { readFileSync } from 'node:fs';
import { chamviWorkflowsPath } from '../../worker/index.js';
import { quietLogger } from '../fixtures/bundle.js';

// Histories recorded on 0.2 (the conversation in every activity input), before the conversation
// moved to the store: runs in flight when workers upgrade must replay on the new workflow code.
// Stored as protobufjs objects (toObject, longs and bytes as strings): with this lockfile's two
// copies of protobufjs, @temporalio/common's historyFromJSON fails with "type must be a Type".
function recorded(name: string): proto.temporal.api.history.v1.History {
  const json: unknown = JSON.parse(readFileSync(new URL(`../fixtures/histories/${name}`, import.meta.url), 'utf8'));
  return proto.temporal.api.history.v1.History.fromObject(json as Record<string, unknown>);
}

let bundle: WorkflowBundle | undefined;
const workflows = async (): Promise<WorkflowBundle> =>
  (bundle ??= await bundleWorkflowCode({ workflowsPath: chamviWorkflowsPath(), logger: quietLogger }));

describe('histories recorded before the conversation left the history', () => {
  it('a 0.2 run with effect and plain tool calls replays on the current workflow code', async () => {
    const history = recorded('agent-run-0.2.json');
    expect(history.events.length).toBeGreaterThan(20);
    await expect(
      Worker.runReplayHistory({ workflowBundle: await workflows() }, history, 'recorded-0.2-run'),
    ).resolves.toBeUndefined();
  }, 60_000);

  it('every execution of a 0.2 run that continued as new replays, the later ones starting from a 0.2 checkpoint', async () => {
    for (const n of [1, 2, 3]) {
      const history = recorded(`agent-run-0.2-continue-as-new-${n}.json`);
      await expect(
        Worker.runReplayHistory({ workflowBundle: await workflows() }, history, 'recorded-0.2-continue-as-new'),
      ).resolves.toBeUndefined();
    }
  }, 60_000);
});
