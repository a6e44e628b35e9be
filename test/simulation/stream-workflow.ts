import type { RunStreamPart } from '../../src/stream/run-stream-store.js';
import { RunStreamWriter } from '../../src/stream/run-stream-writer.js';
import { Prng } from './prng.js';
import { token } from './stream-ledger.js';
import type { StreamWorkflowPlan } from './stream-scenario.js';
import type { CloseTiming, StreamWorld, WorkflowRecord } from './stream-world.js';

/** Temporal's retry pause after a failed attempt, virtual ms. */
const RETRY_MS = 1000;
const MAX_ATTEMPTS = 3;

/**
 * One workflow streaming its model steps as the model-step activity does (`streamModelCall`): a
 * real `RunStreamWriter` per step attempt, fed part by part as the provider streams, closed when
 * the call ends. Some attempts fail mid-stream (Temporal retries), some outlive the start-to-close
 * timeout and keep writing beside their retry (zombies); a reset terminates the execution while a
 * step streams (the old branch writes on) and a new execution takes over; a continue-as-new hands
 * over between steps. Between steps: tool calls, or an approval that takes longer than the
 * stream's retention.
 */
export class StreamWorkflow {
  readonly record: WorkflowRecord;
  private readonly rng: Prng;
  private execution = 0;

  constructor(
    private readonly world: StreamWorld,
    private readonly plan: StreamWorkflowPlan,
    index: number,
  ) {
    this.rng = new Prng(world.scenario.seed, 50 + index);
    this.record = {
      name: plan.name,
      startedAt: plan.startAt,
      runId: plan.runId,
      workflowId: plan.name,
      // The chain's first execution (the next one created): what every execution of the chain writes under.
      firstExecutionRunId: `${plan.name}/E1`,
      executions: [],
      executionStarts: new Map(),
      taken: new Set(),
      status: 'RUNNING',
    };
    world.workflows.push(this.record);
  }

  start(): void {
    this.world.clock.at(this.plan.startAt, () => {
      const running = this.drive(this.newExecution(), 0).then((ok) => {
        this.record.status = ok ? 'COMPLETED' : 'FAILED';
        this.world.trace.log(this.plan.name, `workflow ${this.record.status.toLowerCase()}`);
      });
      this.world.track(running, true);
    });
  }

  private newExecution(): string {
    const id = `${this.plan.name}/E${++this.execution}`;
    this.record.executions.push(id);
    this.record.executionStarts.set(id, this.world.clock.now());
    this.world.trace.log(id, `starts (run id ${this.plan.runId})`);
    return id;
  }

  /** Runs `execution` from step `first`; resolves whether the workflow completed (false: it failed). */
  private async drive(execution: string, first: number): Promise<boolean> {
    const { clock, scenario } = this.world;
    const handover = this.execution === 1 ? this.plan.newExecutionAfter : undefined;
    for (let step = first; step < this.plan.steps; step++) {
      if (handover?.kind === 'reset' && handover.steps === step) {
        // Reset while this step streams: its attempt writes on (the old branch), a new execution takes over.
        this.world.track(this.attempt(execution, step, 1, false), true);
        await clock.sleep(this.rng.int(1, 3000));
        this.world.trace.log(execution, `reset: terminated while step ${step} streams`);
        return this.drive(this.newExecution(), step);
      }
      if (!(await this.runStep(execution, step))) {
        this.world.trace.log(execution, `fails at step ${step}`);
        return false;
      }
      const retention = scenario.retentionMs;
      await clock.sleep(this.rng.chance(0.15) ? this.rng.int(retention / 2, 3 * retention) : this.rng.int(1, 500));
      if (handover?.kind === 'continue-as-new' && handover.steps === step + 1) {
        this.world.trace.log(execution, 'continues as new');
        return this.drive(this.newExecution(), step + 1);
      }
    }
    return true;
  }

  /** The step's attempts until one returns in time; false when none did. */
  private async runStep(execution: string, step: number): Promise<boolean> {
    const { clock, scenario } = this.world;
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const fails = attempt < MAX_ATTEMPTS && this.rng.chance(0.1);
      const zombie = !fails && attempt < MAX_ATTEMPTS && this.rng.chance(0.05);
      const running = this.attempt(execution, step, attempt, fails, zombie);
      this.world.track(running, true);
      let timedOut = false;
      const timeout = clock.sleep(scenario.startToCloseMs).then(() => (timedOut = true));
      const returned = await Promise.race([running, timeout]);
      if (timedOut || returned === false) {
        this.world.trace.log(`${execution}/s${step}/a${attempt}`, timedOut ? 'timed out (start-to-close)' : 'failed');
        await clock.sleep(RETRY_MS);
        continue;
      }
      this.record.taken.add(`${execution}/s${step}/a${attempt}`);
      return true;
    }
    return false;
  }

  /**
   * One attempt: the provider's parts, pushed as they arrive, then the step's end, then `close`
   * (timed: the step returns only once it resolves). Resolves true when the attempt succeeded.
   */
  private async attempt(
    execution: string,
    step: number,
    attempt: number,
    fails: boolean,
    zombie = false,
  ): Promise<boolean> {
    const { clock, trace, store, closes } = this.world;
    const id = `${execution}/s${step}/a${attempt}`;
    const timing: CloseTiming = { who: id, startedAt: 0, warnings: 0 };
    const { runId, workflowId, firstExecutionRunId } = this.record;
    const ref = { runId, workflowId, firstExecutionRunId, step, attempt, execution };
    const writer = new RunStreamWriter(store, ref, (message) => {
      timing.warnings++;
      trace.log(id, `warns: ${message}`);
    });
    const parts = this.parts(id);
    const cut = fails ? this.rng.int(0, parts.length - 1) : parts.length;
    const gap = zombie ? Math.ceil((2 * this.world.scenario.startToCloseMs) / parts.length) : 150;
    for (const part of parts.slice(0, cut)) {
      await clock.sleep(this.rng.int(1, gap));
      writer.push(part);
    }
    if (!fails) writer.push({ type: 'step-end', finishReason: `stop ${token(id, 'end')}` });
    const started = clock.now();
    closes.push(Object.assign(timing, { startedAt: started }));
    await writer.close();
    timing.endedAt = clock.now();
    trace.log(id, `${fails ? 'failed mid-stream' : 'streamed'}; close took ${timing.endedAt - started} ms`);
    return !fails;
  }

  /** What the provider streams in one attempt, each part carrying its token. */
  private parts(id: string): RunStreamPart[] {
    const parts: RunStreamPart[] = [];
    let n = 0;
    if (this.rng.chance(0.2)) {
      for (let i = this.rng.int(1, 3); i > 0; i--)
        parts.push({ type: 'reasoning-delta', id: 'r', delta: token(id, n++) });
    }
    for (
      let i = this.rng.weighted([
        [7, this.rng.int(1, 4)],
        [3, this.rng.int(5, 12)],
      ] as const);
      i > 0;
      i--
    ) {
      parts.push({ type: 'text-delta', id: this.rng.chance(0.1) ? 't2' : 't1', delta: token(id, n++) });
    }
    if (this.rng.chance(0.25)) {
      const toolCallId = `call ${token(id, n++)}`;
      parts.push({ type: 'tool-input-start', toolCallId, toolName: 'lookup' });
      parts.push({ type: 'tool-input-delta', toolCallId, delta: token(id, n++) });
      parts.push({ type: 'tool-call', toolCallId, toolName: 'lookup', input: { q: token(id, n) } });
    }
    return parts;
  }
}
