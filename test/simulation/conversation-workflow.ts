import { Execution, type SimWorker } from './conversation-execution.js';
import { promptMessage, toolCallsOf, toolResultsOf, type AnswerShape } from './conversation-messages.js';
import type { ConvWorkflowPlan } from './conversation-scenario.js';
import { clientRead, modelStepAttempt, toolCallRead, type StepAttemptResult } from './conversation-step.js';
import type { ConvWorld } from './conversation-world.js';
import { Prng } from './prng.js';

/** Temporal's retry pause after a failed or dead attempt (backoff, or the heartbeat timeout), virtual ms. */
const RETRY_MS = 1000;

/**
 * One workflow as Temporal runs it: its executions under one run id (the first, then a reset's or
 * a continue-as-new's), each a loop of model steps and tool calls. A step's attempts: most answer
 * in time; some die with their worker, fail at the provider, or outlive the start-to-close timeout
 * and store their answer late beside the retry that was taken (a zombie). A reset terminates the
 * running execution (its step in flight lands late: the old branch) and starts a new one at an
 * earlier step, which may answer differently.
 */
export class WorkflowDriver {
  current: Execution | undefined;
  private readonly rng: Prng;
  private executions = 0;
  private resetDone = false;

  constructor(
    private readonly world: ConvWorld,
    private readonly plan: ConvWorkflowPlan,
    index: number,
  ) {
    this.rng = new Prng(world.scenario.seed, 30 + index);
  }

  start(): void {
    this.world.clock.at(this.plan.startAt, () => {
      const exec = Execution.start(this.nextId(), this.plan.runId, promptMessage(this.plan.prompt));
      this.begin(exec);
    });
  }

  private nextId(): string {
    return `${this.plan.name}/E${++this.executions}`;
  }

  private begin(exec: Execution): void {
    this.current = exec;
    this.world.executions.push(exec);
    this.world.trace.log(exec.id, `starts at step ${exec.step} (run id ${exec.runId})`);
    this.world.track(this.drive(exec));
  }

  private async drive(first: Execution): Promise<void> {
    const { clock, trace } = this.world;
    let exec = first;
    while (exec.status === 'running') {
      const step = exec.step;
      const reset = this.plan.reset;
      if (reset !== undefined && !this.resetDone && reset.duringStep === step) this.scheduleReset(reset.afterMs);
      const seen = [...exec.full];
      const result = await this.runStep(exec);
      if (exec.status !== 'running') return; // reset meanwhile: what was in flight lands as a zombie
      if (result.kind !== 'answered') {
        exec.status = 'failed';
        trace.log(exec.id, `fails at step ${step}`);
        return;
      }
      exec.answered(result.conversation, result.response);
      if (result.closes) {
        exec.status = 'closed';
        trace.log(exec.id, `closes after step ${step}`);
        this.afterClose(exec);
        return;
      }
      for (const call of toolCallsOf(result.response)) {
        exec.scheduleActivity();
        await clock.sleep(this.rng.int(5, 400));
        await toolCallRead(this.world, exec, this.worker(), call, result.conversation.prompt, seen);
      }
      // Waiting for an approval, sometimes for longer than the store's retention.
      const retention = this.world.scenario.retentionMs;
      await clock.sleep(this.rng.chance(0.15) ? this.rng.int(retention / 4, 3 * retention) : this.rng.int(1, 300));
      if (exec.status !== 'running') return;
      exec.addToolResults(toolResultsOf(toolCallsOf(result.response), exec.branch));
      exec.step++;
      if (this.plan.continueAsNewAfter === step) {
        const next = exec.fork(this.nextId(), exec.branch);
        next.written = exec.written;
        next.continuedFrom = exec.temporal.runId;
        exec.status = 'continued';
        trace.log(exec.id, `continues as new: ${next.id}`);
        this.current = next;
        this.world.executions.push(next);
        exec = next;
      }
    }
  }

  /** The step's attempts until one is taken (or the run fails); zombies keep running, tracked. */
  private async runStep(exec: Execution): Promise<StepAttemptResult> {
    const { scenario, clock } = this.world;
    const input = exec.stepInput();
    const activityId = exec.scheduleActivity();
    const seen = [...exec.full];
    const storedCount = seen.length - exec.pendingCount;
    const shape = this.shape();
    const failures = this.rng.weighted([
      [16, 0],
      [3, 1],
      [1, 2],
    ] as const);
    for (let attempt = 1; attempt < 20; attempt++) {
      const taken = attempt > failures;
      const kind = taken ? 'ok' : this.rng.pick(['zombie', 'provider', 'crash'] as const);
      const worker = this.worker();
      const modelMs =
        kind === 'zombie'
          ? scenario.startToCloseMs +
            this.rng.weighted([
              [6, this.rng.int(1, 3000)],
              [1, this.rng.int(3000, 3 * scenario.retentionMs)],
            ] as const)
          : this.rng.int(5, scenario.startToCloseMs - 100);
      const variant = taken || this.rng.chance(0.5) ? 0 : attempt;
      const running = modelStepAttempt(this.world, exec, input, seen, storedCount, {
        activityId,
        attempt,
        worker,
        modelMs,
        variant,
        shape: taken || this.rng.chance(0.5) ? shape : this.shape(),
        providerFails: kind === 'provider',
        zombie: kind === 'zombie',
        maxSteps: this.plan.maxSteps,
      });
      if (kind === 'crash') clock.at(clock.now() + this.rng.int(1, modelMs), () => worker.restart());
      if (kind === 'zombie') {
        this.world.track(running);
        await clock.sleep(scenario.startToCloseMs + RETRY_MS);
        if (exec.status !== 'running') return { kind: 'died' };
        continue;
      }
      const result = await running;
      if (result.kind === 'died' || result.kind === 'retryable') {
        await clock.sleep(RETRY_MS);
        if (exec.status !== 'running') return result;
        continue;
      }
      return result;
    }
    return { kind: 'died' };
  }

  private shape(): AnswerShape {
    return {
      toolCalls: this.rng.weighted([
        [3, 0],
        [6, 1],
        [1, 2],
      ] as const),
      trailingToolMessage: this.rng.chance(0.15),
    };
  }

  private worker(): SimWorker {
    return this.rng.pick(this.world.workers);
  }

  private afterClose(exec: Execution): void {
    const { clock } = this.world;
    this.world.track(clientRead(this.world, exec, 'at its close'));
    const late = this.rng.int(0, 2 * this.world.scenario.retentionMs);
    this.world.track(clock.sleep(late).then(() => clientRead(this.world, exec, `${late} ms after its close`)));
    const reset = this.plan.reset;
    if (reset !== undefined && !this.resetDone) this.scheduleReset(reset.afterMs);
  }

  /** A reset `afterMs` from now: the running execution is terminated, a new one starts at an earlier step. */
  private scheduleReset(afterMs: number): void {
    this.resetDone = true;
    const { clock, trace } = this.world;
    this.world.track(
      clock.sleep(afterMs).then(() => {
        const old = this.current;
        const reset = this.plan.reset;
        if (old === undefined || reset === undefined) return;
        const points = old.resetPoints();
        const to = points[Math.floor(reset.toFraction * points.length)];
        if (to === undefined) return;
        if (old.status === 'running') old.status = 'terminated';
        const next = old.fork(this.nextId(), old.branch + 1, to);
        trace.log(old.id, `reset to step ${to}: ${next.id} (${old.id} is ${old.status})`);
        this.begin(next);
      }),
    );
  }
}
