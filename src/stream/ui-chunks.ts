import type { UIMessageChunk } from 'ai';
import type { RunStreamBatch, RunStreamPart } from './run-stream-store.js';

/**
 * Turns a run's stream batches into AI SDK UI message chunks, in order, one model step after the
 * other (`start-step` ... `finish-step`). Part ids are unique per step attempt
 * (`<step>.<attempt>.<id>`, prefixed with the execution after a reset), so a page never merges
 * two attempts' text.
 *
 * A retried step: the first batch of a newer attempt of the step being shown emits `reset-step`,
 * which AI SDK's UI message reader answers by removing every part of the current step; the
 * newer attempt's text follows. So a retried step's partial text is replaced, never appended.
 * Batches of an attempt already replaced (a zombie that still writes), of steps already passed
 * and of executions already passed (a zombie of the execution before a continue-as-new or reset)
 * are dropped.
 */
export class RunStreamUIState {
  private step: number | undefined;
  private execution: string | undefined;
  private attempt = 0;
  private stepOpen = false;
  /** Executions the view moved past: what they still write comes from zombie attempts. */
  private readonly passed = new Set<string>();
  private readonly openText = new Set<string>();
  private readonly openReasoning = new Set<string>();
  private readonly openTools = new Set<string>();

  /** The chunks of `batch` (none when it is superseded). */
  batch(batch: RunStreamBatch): UIMessageChunk[] {
    const out: UIMessageChunk[] = [];
    const sameExecution = batch.execution === this.execution;
    // An activity of an earlier execution may outlive it (a timed-out attempt beside its retry,
    // then continue-as-new or a reset): its batches must not open a step between the new ones.
    if (this.passed.has(batch.execution)) return out;
    if (this.step === undefined || !sameExecution || batch.step > this.step) {
      if (this.execution !== undefined && !sameExecution) this.passed.add(this.execution);
      // A new step (or a reset's new execution, shown as a new step after what was shown).
      out.push(...this.endStep(), { type: 'start-step' });
      this.begin(batch);
    } else if (batch.step < this.step || batch.attempt < this.attempt) {
      return out; // a late writer of a step or attempt already replaced
    } else if (batch.attempt > this.attempt) {
      // A retry: the earlier attempt's partial text goes (AI SDK removes the current step's parts).
      out.push({ type: 'reset-step' });
      this.openText.clear();
      this.openReasoning.clear();
      this.openTools.clear();
      this.begin(batch);
    }
    const prefix = this.prefix(batch);
    for (const part of batch.parts) out.push(...this.part(prefix, part));
    return out;
  }

  /** Closes the step being shown (its open parts, then `finish-step`); nothing when none is. */
  endStep(): UIMessageChunk[] {
    if (!this.stepOpen) return [];
    const out: UIMessageChunk[] = [];
    for (const id of this.openText) out.push({ type: 'text-end', id });
    for (const id of this.openReasoning) out.push({ type: 'reasoning-end', id });
    this.openText.clear();
    this.openReasoning.clear();
    this.openTools.clear();
    this.stepOpen = false;
    out.push({ type: 'finish-step' });
    return out;
  }

  /** Whether a step is being shown (started and not ended). */
  get inStep(): boolean {
    return this.stepOpen;
  }

  private begin(batch: RunStreamBatch): void {
    this.step = batch.step;
    this.attempt = batch.attempt;
    this.execution = batch.execution;
    this.stepOpen = true;
  }

  private prefix(batch: RunStreamBatch): string {
    return `${batch.execution.slice(0, 8)}.${batch.step}.${batch.attempt}.`;
  }

  private part(prefix: string, part: RunStreamPart): UIMessageChunk[] {
    if (!this.stepOpen) return []; // after this attempt's step-end: nothing more belongs to it
    switch (part.type) {
      case 'text-delta': {
        const id = prefix + part.id;
        const start: UIMessageChunk[] = this.openText.has(id) ? [] : [{ type: 'text-start', id }];
        this.openText.add(id);
        return [...start, { type: 'text-delta', id, delta: part.delta }];
      }
      case 'reasoning-delta': {
        const id = prefix + part.id;
        const start: UIMessageChunk[] = this.openReasoning.has(id) ? [] : [{ type: 'reasoning-start', id }];
        this.openReasoning.add(id);
        return [...start, { type: 'reasoning-delta', id, delta: part.delta }];
      }
      case 'tool-input-start':
        this.openTools.add(part.toolCallId);
        return [{ type: 'tool-input-start', toolCallId: part.toolCallId, toolName: part.toolName }];
      case 'tool-input-delta':
        // A delta of a call whose start this reader never saw would fail AI SDK's reader: skipped.
        if (!this.openTools.has(part.toolCallId)) return [];
        return [{ type: 'tool-input-delta', toolCallId: part.toolCallId, inputTextDelta: part.delta }];
      case 'tool-call':
        return [
          { type: 'tool-input-available', toolCallId: part.toolCallId, toolName: part.toolName, input: part.input },
        ];
      case 'step-end':
        return this.endStep();
    }
  }
}
