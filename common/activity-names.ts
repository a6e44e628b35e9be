/**
 * The names the chamvi activities are registered under on a worker, and scheduled by from workflow
 * code. A name is part of the contract between a workflow's history and the workers that replay
 * it: renaming one strands the runs in flight.
 */
export const ACTIVITY_NAMES = {
  /** One model call of a step (`createModelStepActivity`). */
  modelStep: 'chamvi.modelStep',
  /** One call of an effect tool, through the whole effect protocol. */
  effectCall: 'chamvi.effectCall',
  /** One call of a plain tool. */
  toolCall: 'chamvi.toolCall',
  /** Writes a record the effect call could not write, retried until it is durable. */
  recordEffect: 'chamvi.recordEffect',
  /** Checks an approval decision's token on a worker that holds the approval secret. */
  verifyApproval: 'chamvi.verifyApproval',
  /** Undoes one applied effect (its tool's `compensate`), through the effect protocol under `<key>:compensate`. */
  compensate: 'chamvi.compensate',
} as const;

/** One of {@link ACTIVITY_NAMES}. */
export type ChamviActivityName = (typeof ACTIVITY_NAMES)[keyof typeof ACTIVITY_NAMES];
