import { describe, expect, it } from '@jest/globals';
import { bundleWorkflowCode, Worker, type WorkflowBundle } from '@temporalio/worker';
import proto from '@temporalio/proto';
import { readFileSync } from 'node:fs';
import { chamviWorkflowsPath } from '../../worker/workflows-path.js';
import { quietLogger } from '../fixtures/bundle.js';

// Histories recorded by test/fixtures/histories/record-histories.ts: on 0.3 (aa479d8), and on 0.2
// (bea809b), whose runs keep the whole conversation in every activity
// input. The workflows of 0.3 keep it in the store and do not continue such runs: replayed, the
// run's workflow task fails, naming the upgrade path, instead of the run failing or going on with
// a wrong conversation (docs/migrating.md: drain the 0.2 runs first). Stored as protobufjs objects
// (toObject, longs and bytes as strings): with this lockfile's two copies of protobufjs,
// @temporalio/common's historyFromJSON fails with "type must be a Type".
function recorded(name: string): proto.temporal.api.history.v1.History {
  const json: unknown = JSON.parse(readFileSync(new URL(`../fixtures/histories/${name}`, import.meta.url), 'utf8'));
  return proto.temporal.api.history.v1.History.fromObject(json as Record<string, unknown>);
}

let bundle: WorkflowBundle | undefined;
const workflows = async (): Promise<WorkflowBundle> =>
  (bundle ??= await bundleWorkflowCode({ workflowsPath: chamviWorkflowsPath(), logger: quietLogger }));

const REFUSED = /keeps its conversation in the event history, as @chamvi\/temporal 0\.2 did\. Run 0\.2 workers/;

describe('runs begun on 0.2, which keep the conversation in the event history', () => {
  it('a 0.2 run is not continued: its workflow task fails at its first model step, saying to drain the 0.2 runs', async () => {
    const history = recorded('agent-run-0.2.json');
    expect(history.events.length).toBeGreaterThan(20);
    await expect(
      Worker.runReplayHistory({ workflowBundle: await workflows() }, history, 'recorded-0.2-run'),
    ).rejects.toThrow(REFUSED);
  }, 60_000);

  it('no execution of a 0.2 run that continued as new is continued, the later ones starting from a 0.2 checkpoint', async () => {
    for (const n of [1, 2, 3]) {
      const history = recorded(`agent-run-0.2-continue-as-new-${n}.json`);
      await expect(
        Worker.runReplayHistory({ workflowBundle: await workflows() }, history, 'recorded-0.2-continue-as-new'),
      ).rejects.toThrow(REFUSED);
    }
  }, 60_000);
});

describe('runs begun on 0.3', () => {
  // Three steps (one call, then two in parallel, then the answer): a workflow change that issues
  // other commands (one more or fewer, or of another kind) fails here, as it would fail runs in flight.
  it('a 0.3 run replays on the workflows of today without a nondeterminism error', async () => {
    const history = recorded('agent-run-0.3.json');
    expect(history.events.filter((e) => e.activityTaskScheduledEventAttributes).length).toBeGreaterThanOrEqual(6);
    await Worker.runReplayHistory({ workflowBundle: await workflows() }, history, 'recorded-0.3-run');
  }, 60_000);

  it('every execution of a 0.3 run that continued as new replays, the later ones from their checkpoints', async () => {
    for (const n of [1, 2, 3]) {
      const history = recorded(`agent-run-0.3-continue-as-new-${n}.json`);
      await Worker.runReplayHistory({ workflowBundle: await workflows() }, history, 'recorded-0.3-continue-as-new');
    }
  }, 60_000);
});
