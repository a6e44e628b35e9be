/** The names of the conversation tables of one effects table, the same in SQLite and PostgreSQL. */
export interface ConversationTables {
  readonly entries: string;
  /** One open/closed row per run id, the layout before executions were tracked: kept for its rows (each counts as execution `''` of its run). */
  readonly runs: string;
  /** One row per execution of a run: open or closed, when, and the activity and attempt of that write. */
  readonly executions: string;
  readonly payloads: string;
}

/**
 * The conversation tables next to the effects table `table`; the suffixes are short so that they
 * fit the PostgreSQL store's 52-character table name limit.
 */
export function conversationTables(table: string): ConversationTables {
  return {
    entries: `${table}_conv`,
    runs: `${table}_conv_runs`,
    executions: `${table}_conv_execs`,
    payloads: `${table}_payloads`,
  };
}
