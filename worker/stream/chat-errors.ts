import { ChamviError } from '../../src/errors/chamvi-error.js';

/**
 * A chat request the route cannot take as it is (`chatRoute`): not JSON, no chat id, no
 * messages, a last message that is neither a new user message nor approval answers, a part of a
 * kind a user message cannot have. Nothing was started or decided. Answered with status 400.
 */
export class ChatRequestError extends ChamviError {
  static override readonly errorName = 'ChatRequestError';
}

/**
 * The chat's turns on the server do not match the request (`chatRoute`): the previous turn is
 * still running or did not complete, a turn is sent twice, or answers name a turn that waits for
 * nothing. Nothing was started or decided; reload the chat. Answered with status 409.
 */
export class ChatTurnConflictError extends ChamviError {
  static override readonly errorName = 'ChatTurnConflictError';
}

/**
 * An approval answer from the page does not match the call the run waits for (`chatRoute`): its
 * approval id names another run or call, its tool differs, or its copy of the input is not the
 * input the call was planned with (the fingerprint differs). No decision was sent to the run.
 * Answered with status 409.
 */
export class ApprovalAnswerRefusedError extends ChamviError {
  static override readonly errorName = 'ApprovalAnswerRefusedError';
}

/** The chat is not the requester's (`chatRoute`'s `authorize` said no). Answered with status 403. */
export class ChatForbiddenError extends ChamviError {
  static override readonly errorName = 'ChatForbiddenError';
}

/** The handler's response; a refused request as JSON `{ error, message }` with its status. */
export async function answerRefusals(handle: () => Promise<Response>): Promise<Response> {
  try {
    return await handle();
  } catch (error) {
    const status = ChatRequestError.isInstance(error)
      ? 400
      : ChatForbiddenError.isInstance(error)
        ? 403
        : ChatTurnConflictError.isInstance(error) || ApprovalAnswerRefusedError.isInstance(error)
          ? 409
          : undefined;
    if (status === undefined || !ChamviError.isInstance(error)) throw error;
    return Response.json({ error: error.name, message: error.message }, { status });
  }
}
