import type { ConversationEntry } from '../conversation/conversation-entry.js';
import { EffectStoreError } from '../errors/errors.js';
import { ABANDONED_RUN_MS, type AppendConversationOptions, type ConversationStore } from './conversation-store.js';
import { chainFromRows, plantedEntry } from './conversation-chain.js';
import { checkedWriteOrder } from './conversation-write-order.js';
import type {
  ClaimRequest,
  ClaimResult,
  ClaimToken,
  EffectClaims,
  EffectRecord,
  EffectRecordInput,
} from './effect-store.js';
import type { FencedResult, IEffectStore } from './effect-store.js';
import { toRecordColumns, type RecordColumns } from './effect-row.js';
import { DEFAULT_RETENTION_MS, type RetentionOptions } from './retention.js';
import { SqliteConnection } from './sqlite-connection.js';
import {
  checkClaimRequest,
  checkLease,
  checkPruneLimit,
  MAX_TIMEOUT_MS,
  msOption,
  RETENTION_RANGE,
} from './store-options.js';
import { checkIdentifier } from './sqlite-schema.js';
import { toRecord, type SqliteRow, type SqliteStatements } from './sqlite-statements.js';
import { parseStoreSpec } from './store-spec.js';
import { checkStorable, checkStorableFields, HASHED_KEY_PREFIX, prefixUpperBound, storageKey } from './storage-key.js';

/** Options of {@link SqliteEffectStore}. @public */
export interface SqliteEffectStoreOptions extends RetentionOptions {
  /**
   * Database file path, `:memory:`, or an `sqlite:` URL. Missing parent folders are created when
   * the file is first opened; a path that cannot be opened fails with `EffectStoreOpenError`
   * naming it (not retryable).
   */
  readonly path: string;
  /** Table name (letters, digits, underscores). Default `chamvi_effects`. */
  readonly table?: string;
  /** How long one operation waits for another process's write lock before it throws, in ms. Default 5000. */
  readonly busyTimeoutMs?: number;
}

/** Rows per DELETE in {@link SqliteEffectStore.prune}, so a prune never holds the write lock for long. */
const PRUNE_BATCH = 500;

/**
 * The embedded effect store: one SQLite file (Node's built-in `node:sqlite`), shared safely by
 * every process on the machine. WAL journal, `synchronous=FULL` (a record survives power loss
 * once a call returns), leases and expiry on the database's clock, every claim one conditional
 * upsert. The schema is created on first use and checked.
 *
 * The writes of concurrent calls issued in one event-loop turn share one transaction and one
 * fsync (group commit), each in a savepoint of its own; each call still returns only once its
 * write is committed. Calls are synchronous under the hood; a lock held by another process is waited for in short
 * blocking slices and asynchronous retries (up to `busyTimeoutMs`), so the event loop (and
 * Temporal heartbeats) keep running. Call {@link close} when done.
 *
 * Next to the effects table it keeps the conversations of agent runs and the payloads Temporal's
 * External Storage offloads ({@link ConversationStore}), in tables named after it (`<table>_conv`,
 * `<table>_conv_runs`, `<table>_payloads`), created on first use.
 * @public
 */
export class SqliteEffectStore implements IEffectStore, EffectClaims, ConversationStore {
  /** The database file's path, as given. */
  readonly path: string;
  private readonly table: string;
  private readonly retentionMs: number;
  private readonly conn: SqliteConnection;

  /** @param options a file path, an `sqlite:` URL, or {@link SqliteEffectStoreOptions}. */
  constructor(options: string | SqliteEffectStoreOptions) {
    const opts = typeof options === 'string' ? { path: options } : options;
    const spec = opts.path.startsWith('sqlite:') ? parseStoreSpec(opts.path) : undefined;
    this.path = spec?.kind === 'sqlite' ? spec.path : opts.path;
    this.table = checkIdentifier(opts.table ?? 'chamvi_effects', 'table name');
    this.retentionMs = msOption(
      'SqliteEffectStore',
      'retentionMs',
      opts.retentionMs,
      DEFAULT_RETENTION_MS,
      RETENTION_RANGE,
    );
    const busyTimeoutMs = msOption('SqliteEffectStore', 'busyTimeoutMs', opts.busyTimeoutMs, 5000, {
      min: 0,
      max: MAX_TIMEOUT_MS,
    });
    this.conn = new SqliteConnection(this.path, this.table, busyTimeoutMs);
  }

  /** The finished record for `key`, or `undefined` (also when it has expired). */
  async get(key: string): Promise<EffectRecord | undefined> {
    checkStorable(key);
    return this.conn.run((sql) => this.finished(sql, key));
  }

  /** First writer wins: writes the record unless one is finished (an open claim is finished by it); returns the stored one. */
  async put(key: string, record: EffectRecordInput): Promise<EffectRecord> {
    checkStorableFields(key, record);
    return this.conn.write((sql) => {
      const row = sql.put.get({ ...this.recordParams(record), id: storageKey(key), key });
      return row === undefined ? this.winner(sql, key) : toRecord(row as unknown as SqliteRow);
    });
  }

  /** {@inheritDoc EffectClaims.claim} */
  async claim(key: string, request: ClaimRequest): Promise<ClaimResult> {
    const lease = checkClaimRequest(key, request);
    checkStorableFields(key, request);
    return this.conn.write((sql): ClaimResult => {
      const acquired = sql.claim.get({
        id: storageKey(key),
        key,
        owner: request.owner,
        lease,
        tool: request.toolName,
        run: request.runId ?? null,
        attempt: request.attempt ?? null,
        fp: request.fingerprint ?? null,
      }) as { fence: number; previous_owner: string | null } | undefined;
      if (acquired !== undefined) {
        const prev = acquired.previous_owner;
        const takeover = prev !== null && prev !== request.owner;
        return { status: 'acquired', token: { key, owner: request.owner, fence: acquired.fence }, takeover };
      }
      // Inside the same IMMEDIATE transaction: the row that refused the claim is still as it was.
      const done = this.finished(sql, key);
      if (done !== undefined) return { status: 'done', record: done };
      const held = sql.holder.get({ id: storageKey(key) }) as { key: string; owner: string; remaining: number };
      if (held.key !== key) throw collision(key, held.key);
      return { status: 'busy', owner: held.owner, leaseRemainingMs: Math.max(0, held.remaining) };
    });
  }

  /** {@inheritDoc EffectClaims.complete} */
  async complete(token: ClaimToken, record: EffectRecordInput): Promise<FencedResult> {
    checkStorableFields(token.key, { ...record, owner: token.owner });
    return this.conn.write((sql): FencedResult => {
      const row = sql.complete.get({ ...this.recordParams(record), ...tokenParams(token) });
      return row === undefined
        ? lost(this.finished(sql, token.key))
        : { status: 'ok', record: toRecord(row as unknown as SqliteRow) };
    });
  }

  /** {@inheritDoc EffectClaims.release} */
  async release(token: ClaimToken): Promise<FencedResult> {
    checkStorableFields(token.key, token);
    return this.fenced(token, (sql) => sql.release.get(tokenParams(token)));
  }

  /** {@inheritDoc EffectClaims.renew} */
  async renew(token: ClaimToken, leaseMs: number): Promise<FencedResult> {
    const lease = checkLease(token.key, leaseMs);
    checkStorableFields(token.key, token);
    return this.fenced(token, (sql) => sql.renew.get({ ...tokenParams(token), lease }));
  }

  /**
   * Deletes up to `limit` (default 1000) expired finished records, then abandoned claims (lease
   * ended more than `retentionMs` ago), then the conversation entries of runs closed more than
   * `retentionMs` ago (or abandoned, see `ABANDONED_RUN_MS`) and expired payloads, in batches of
   * 500; returns how many rows it deleted (entries and payloads included). See
   * `ManagedEffectStore.prune` for why a claim is kept that long.
   */
  async prune(limit = 1000): Promise<number> {
    checkPruneLimit(limit);
    let deleted = 0;
    for (const kind of ['prune', 'pruneClaims'] as const) {
      while (deleted < limit) {
        const batch = Math.min(PRUNE_BATCH, limit - deleted);
        const changes = await this.conn.run((sql) =>
          Number(
            sql[kind].run({ n: batch, ...(kind === 'pruneClaims' ? { retention: this.retentionMs } : {}) }).changes,
          ),
        );
        deleted += changes;
        if (changes < batch) break;
      }
    }
    const ages = { retention: this.retentionMs, abandoned: Math.max(this.retentionMs, ABANDONED_RUN_MS) };
    for (const kind of ['pruneEntries', 'prunePayloads'] as const) {
      while (deleted < limit) {
        const batch = Math.min(PRUNE_BATCH, limit - deleted);
        const changes = await this.conn.run((sql) =>
          Number(sql.conversation[kind].run({ n: batch, ...(kind === 'pruneEntries' ? ages : {}) }).changes),
        );
        deleted += changes;
        if (changes < batch) break;
      }
    }
    // Executions and run rows whose run has no entries left: bookkeeping, not counted.
    await this.conn.run((sql) => {
      sql.conversation.pruneExecutions.run({ n: PRUNE_BATCH, ...ages });
      sql.conversation.pruneRuns.run({ n: PRUNE_BATCH, ...ages });
    });
    return deleted;
  }

  /**
   * Writes the entries the file lacks and marks the execution open (or closed), in one
   * transaction; refuses (writing nothing) an entry whose key the file holds with other content.
   */
  async appendConversation(
    runId: string,
    entries: readonly ConversationEntry[],
    options: AppendConversationOptions = {},
  ): Promise<void> {
    const execution = options.execution ?? '';
    const order = checkedWriteOrder(options.writtenBy);
    await this.conn.write((sql) => {
      const c = sql.conversation;
      for (const e of entries) {
        const row = { key: e.key, parent: e.parent, run: runId, json: e.json };
        if (Number(c.insertEntry.run(row).changes) === 0 && c.sameEntry.get(row) === undefined) {
          throw plantedEntry(runId, e.key);
        }
      }
      c.touchExecution.run({
        run: runId,
        execution,
        open: options.close === true ? 0 : 1,
        activity: order?.activity ?? null,
        attempt: order?.attempt ?? null,
      });
      const previous = options.previousExecution;
      if (previous !== undefined && previous !== execution) c.closeExecution.run({ run: runId, execution: previous });
    });
  }

  /** The conversation ending at `head`, oldest entry first, in one recursive query; `undefined` for an unknown head. */
  async loadConversation(head: string): Promise<ConversationEntry[] | undefined> {
    return this.conn.run((sql) => chainFromRows(head, sql.conversation.chain.all({ head })));
  }

  /** {@inheritDoc ConversationStore.putPayload} */
  async putPayload(key: string, data: Uint8Array): Promise<void> {
    await this.conn.write((sql) => sql.conversation.putPayload.run({ key, data, retention: this.retentionMs }));
  }

  /** {@inheritDoc ConversationStore.getPayload} */
  async getPayload(key: string): Promise<Uint8Array | undefined> {
    return this.conn.run((sql) => (sql.conversation.getPayload.get({ key }) as { data: Uint8Array } | undefined)?.data);
  }

  /** Finished, unexpired records whose key starts with `prefix` (a run id, say), in key order. */
  async list(prefix: string): Promise<EffectRecord[]> {
    checkStorable(prefix, 'prefix');
    return this.conn.run((sql) => {
      const rows = sql.list.all({
        p: prefix,
        upper: prefixUpperBound(prefix),
        hashed: HASHED_KEY_PREFIX,
      }) as unknown as SqliteRow[];
      return rows.map(toRecord).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    });
  }

  /** Closes the database file. Later calls reopen it. */
  close(): Promise<void> {
    this.conn.close();
    return Promise.resolve();
  }

  private fenced(token: ClaimToken, update: (sql: SqliteStatements) => unknown): Promise<FencedResult> {
    return this.conn.write((sql): FencedResult =>
      update(sql) === undefined ? lost(this.finished(sql, token.key)) : { status: 'ok' },
    );
  }

  private finished(sql: SqliteStatements, key: string): EffectRecord | undefined {
    const row = sql.get.get({ id: storageKey(key) }) as SqliteRow | undefined;
    if (row === undefined) return undefined;
    if (row.key !== key) throw collision(key, row.key);
    return toRecord(row);
  }

  private winner(sql: SqliteStatements, key: string): EffectRecord {
    const winner = this.finished(sql, key);
    if (winner === undefined) throw collision(key, '(an unfinished claim)');
    return winner;
  }

  private recordParams(record: EffectRecordInput): Record<string, string | number | null> {
    const c: RecordColumns = toRecordColumns(record);
    return {
      tool: c.toolName,
      origin: c.origin,
      result: c.result,
      ru: c.resultUndefined ? 1 : 0,
      run: c.runId,
      attempt: c.attempt,
      fp: c.fingerprint,
      recordedAt: c.recordedAt,
      retention: this.retentionMs,
      unser: c.unserializable,
    };
  }
}

function tokenParams(token: ClaimToken): Record<string, string | number> {
  return { id: storageKey(token.key), key: token.key, owner: token.owner, fence: token.fence };
}

function lost(record: EffectRecord | undefined): FencedResult {
  return record === undefined ? { status: 'lost' } : { status: 'lost', record };
}

function collision(key: string, stored: string): EffectStoreError {
  return new EffectStoreError(
    `Effect key "${key.slice(0, 80)}…" hashes to the same stored key as "${stored.slice(0, 80)}…"; refusing to mix their records.`,
  );
}
