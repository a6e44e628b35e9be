import { Context } from '@temporalio/activity';

/** The Temporal activity the caller runs in, if any: its type and attempt (1 = first). */
export function currentActivity(): { readonly type: string; readonly attempt: number } | undefined {
  let info;
  try {
    info = Context.current().info;
  } catch {
    // Outside an activity (a test calling the protocol directly, a worker starting up).
    return undefined;
  }
  return { type: info.activityType, attempt: info.attempt };
}
