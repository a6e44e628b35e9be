import { InvalidOptionError } from '../errors/errors.js';

/**
 * Which write of its execution a conversation write is: the Temporal activity that writes and
 * its attempt. Writes of one execution are ordered by activity, then attempt.
 * @public
 */
export interface ConversationWriteOrder {
  /**
   * The activity's place among the execution's activities: 1, 2, 3… in the order the workflow
   * scheduled them (the TypeScript SDK's activity ids), so a later model step has a higher one.
   */
  readonly activity: number;
  /** Temporal's attempt of that activity, from 1: the attempt Temporal takes is the highest that ran. */
  readonly attempt: number;
}

/** Largest value of both numbers: Temporal's activity sequence numbers and attempts are 32-bit. */
export const MAX_WRITE_ORDER = 2_147_483_647;

/**
 * `order` checked, or `undefined` when absent.
 *
 * @throws InvalidOptionError naming the field, the value and the range.
 */
export function checkedWriteOrder(order: ConversationWriteOrder | undefined): ConversationWriteOrder | undefined {
  if (order === undefined) return undefined;
  if (typeof order !== 'object' || order === null) {
    throw new InvalidOptionError(
      `appendConversation option writtenBy is ${order === null ? 'null' : `of type ${typeof order}`}; use { activity, attempt }, or leave it out.`,
    );
  }
  const field = (name: keyof ConversationWriteOrder): number => {
    const value: unknown = order[name];
    if (typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= MAX_WRITE_ORDER) return value;
    const shown = value === undefined ? 'missing' : typeof value === 'number' ? `${value}` : `of type ${typeof value}`;
    throw new InvalidOptionError(
      `appendConversation option writtenBy.${name} is ${shown}; use a whole number from 1 to ${MAX_WRITE_ORDER} (the writing activity's sequence number and its attempt), or leave writtenBy out.`,
    );
  };
  return { activity: field('activity'), attempt: field('attempt') };
}

/**
 * Whether a write at `order` sets its execution's hold, the execution's latest write so far being
 * at `latest`: unless it comes from an older activity or attempt. A write or a row without an
 * order (written outside an activity, or by a worker of the earlier layout) counts as the latest.
 */
export function isLatestWrite(
  order: ConversationWriteOrder | undefined,
  latest: ConversationWriteOrder | undefined,
): boolean {
  if (order === undefined || latest === undefined) return true;
  return order.activity !== latest.activity ? order.activity > latest.activity : order.attempt >= latest.attempt;
}
