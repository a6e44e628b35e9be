import type { ConversationEntry } from '../conversation/conversation-entry.js';
import { EffectStoreError } from '../errors/errors.js';
import { ABANDONED_RUN_MS, type AppendConversationOptions, type ConversationStore } from './conversation-store.js';
import { chainFromRows, plantedEntry } from './conversation-chain.js';
import { checkedWriteOrder } from './conversation-write-order.js';
import { pgConversationStatements, type PgConversationStatements } from './postgres-conversation.js';
import type { ClaimRequest, ClaimResult, ClaimToken, EffectClaims, EffectRecord } from './effect-store.js';
import type { EffectRecordInput, FencedResult, IEffectStore } from './effect-store.js';
import { toRecordColumns } from './effect-row.js';
import { PgConnection, type PgPoolSource } from './postgres-connection.js';
import { quoteIdentifier, quoteTableName } from './postgres-schema.js';
import { pgBatchStatements, type PgBatchStatements } from './postgres-batch-statements.js';
import { PgStatementBatch } from './pg-statement-batch.js';
import { pgStatements, toRecord, type PgRecordRow, type PgStatements } from './postgres-statements.js';
import { DEFAULT_RETENTION_MS, type RetentionOptions } from './retention.js';
import { checkStorable, checkStorableFields, HASHED_KEY_PREFIX, prefixUpperBound, storageKey } from './storage-key.js';
import { checkClaimRequest, checkLease, checkPruneLimit, msOption, RETENTION_RANGE } from './store-options.js';

/** Options of {@link PostgresEffectStore}. @public */
export interface PostgresEffectStoreOptions extends RetentionOptions, PgPoolSource {
  /** Schema of the table, created if missing. Default `public`. */
  readonly schema?: string;
  /** Table name. Default `chamvi_effects`. */
  readonly table?: string;
}

const PRUNE_BATCH = 500;
// A refused claim is explained by a second read; if the row changed in between, claim again (bounded).
const CLAIM_TRIES = 3;

/**
 * The production effect store: a PostgreSQL table shared by every worker. Parameterized SQL only;
 * every claim, completion and first-writer-wins put is one upsert or update under READ COMMITTED
 * (the claims, the completions and the conversation appends of concurrent calls issued in one turn
 * share one statement of each kind);
 * leases and expiry use the database's clock (`now()`), never the worker's. Keys over 512 bytes
 * are hashed for the primary key and kept in full beside it. The schema and table are created on
 * first use (or checked). A server that cannot be reached fails the call after the connect
 * timeout, a statement stuck on the server after `statementTimeoutMs` (default 5 s), and a
 * connection that stops answering (bytes black-holed) after `queryTimeoutMs` (default 10 s), each
 * with an {@link EffectStoreError} naming host and port; before the effect, nothing is applied.
 *
 * `pg` is an optional peer dependency, loaded when the store first runs a statement; without it
 * the call fails with `MissingPeerDependencyError` (`npm install pg`).
 *
 * Next to the effects table it keeps the conversations of agent runs and the payloads Temporal's
 * External Storage offloads ({@link ConversationStore}), in tables named after it (`<table>_conv`,
 * `<table>_conv_runs`, `<table>_payloads`), created with it.
 * @public
 */
export class PostgresEffectStore implements IEffectStore, EffectClaims, ConversationStore {
  private readonly conn: PgConnection;
  private readonly sql: PgStatements;
  private readonly conv: PgConversationStatements;
  private readonly retentionMs: number;
  private readonly batched: PgBatchStatements;
  // Claims and completions of concurrent calls share a statement, a round trip and a commit.
  private readonly claims = new PgStatementBatch<unknown[], ClaimRow | undefined>(
    async (values) => (await this.query<ClaimRow>(this.sql.claim, values))[0],
    async (items) => {
      const rows = await this.query<ClaimRow & { b_id: string }>(this.batched.claims, columnsOf(items, 8));
      const taken = new Map(rows.map((r) => [r.b_id, r]));
      return items.map((values) => taken.get(values[0] as string));
    },
  );
  private readonly completes = new PgStatementBatch<unknown[], PgRecordRow | undefined>(
    async (values) => (await this.query<PgRecordRow>(this.sql.complete, values))[0],
    async (items) => {
      const rows = await this.query<PgRecordRow & { b_id: string; b_owner: string; b_fence: string }>(
        this.batched.completes,
        columnsOf(items, 14),
      );
      const done = new Map(rows.map((r) => [`${r.b_id}\u0000${r.b_owner}\u0000${r.b_fence}`, r]));
      return items.map((v) => done.get(`${v[0] as string}\u0000${v[2] as string}\u0000${String(v[3])}`));
    },
  );

  // Appends of concurrent model steps too. A run's second append in the turn runs after the batch,
  // on its own, and its failure is its own: the batch has committed by then.
  private readonly appends = new PgStatementBatch<PgAppend, AppendOutcome>(
    (item) => this.appendAlone(item),
    async (items) => {
      const runs = new Set<string>();
      const together: number[] = [];
      const after: number[] = [];
      items.forEach((item, n) => {
        (runs.has(item.runId) ? after : together).push(n);
        runs.add(item.runId);
      });
      const outcomes: AppendOutcome[] = items.map(() => ({}));
      const rows = await this.query<{ n: number; key: string }>(
        this.conv.appendMany,
        appendManyValues(together.map((n) => [n, items[n] as PgAppend] as const)),
      );
      for (const row of rows) if (outcomes[row.n]?.planted === undefined) outcomes[row.n] = { planted: row.key };
      for (const n of after) {
        outcomes[n] = await this.appendAlone(items[n] as PgAppend).catch((error: unknown) => ({
          error: error instanceof Error ? error : new Error(String(error)),
        }));
      }
      return outcomes;
    },
  );

  /** @param options a `postgres://` URL or {@link PostgresEffectStoreOptions}. */
  constructor(options: string | PostgresEffectStoreOptions) {
    const opts: PostgresEffectStoreOptions = typeof options === 'string' ? { connectionString: options } : options;
    const schema = opts.schema ?? 'public';
    const table = opts.table ?? 'chamvi_effects';
    const qualified = `${quoteIdentifier(schema, 'schema name')}.${quoteTableName(table)}`;
    this.sql = pgStatements(qualified);
    this.batched = pgBatchStatements(qualified);
    this.conv = pgConversationStatements(schema, table);
    this.conn = new PgConnection(opts, schema, table);
    this.retentionMs = msOption(
      'PostgresEffectStore',
      'retentionMs',
      opts.retentionMs,
      DEFAULT_RETENTION_MS,
      RETENTION_RANGE,
    );
  }

  /** The finished record for `key`, or `undefined` (also when it has expired). */
  async get(key: string): Promise<EffectRecord | undefined> {
    checkStorable(key);
    const rows = await this.query<PgRecordRow>(this.sql.get, [storageKey(key)]);
    return rows[0] === undefined ? undefined : checked(key, rows[0]);
  }

  /** First writer wins: writes the record unless one is finished (an open claim is finished by it); returns the stored one. */
  async put(key: string, record: EffectRecordInput): Promise<EffectRecord> {
    checkStorableFields(key, record);
    for (let tries = 0; ; tries++) {
      const rows = await this.query<PgRecordRow>(this.sql.put, [storageKey(key), key, ...this.cols(record)]);
      if (rows[0] !== undefined) return checked(key, rows[0]);
      const winner = await this.get(key);
      if (winner !== undefined) return winner;
      if (tries >= CLAIM_TRIES) throw collision(key);
    }
  }

  /** {@inheritDoc EffectClaims.claim} */
  async claim(key: string, request: ClaimRequest): Promise<ClaimResult> {
    const lease = checkClaimRequest(key, request);
    checkStorableFields(key, request);
    const id = storageKey(key);
    const values: unknown[] = [id, key, request.owner, lease, request.toolName];
    values.push(request.runId ?? null, request.attempt ?? null, request.fingerprint ?? null);
    for (let tries = 1; ; tries++) {
      const acquired =
        tries === 1 ? await this.claims.run(values) : (await this.query<ClaimRow>(this.sql.claim, values))[0];
      if (acquired !== undefined) {
        const prev = acquired.previous_owner;
        const token = { key, owner: request.owner, fence: Number(acquired.fence) };
        return { status: 'acquired', token, takeover: prev !== null && prev !== request.owner };
      }
      const done = await this.get(key);
      if (done !== undefined) return { status: 'done', record: done };
      const [held] = await this.query<{ key: string; owner: string | null; finished: boolean; remaining: number }>(
        this.sql.holder,
        [id],
      );
      if (held !== undefined && held.key !== key) throw collision(key);
      const live = held !== undefined && !held.finished && held.owner !== null && held.remaining > 0;
      if (live || tries >= CLAIM_TRIES) {
        return { status: 'busy', owner: held?.owner ?? '', leaseRemainingMs: Math.max(0, held?.remaining ?? 0) };
      }
    }
  }

  /** {@inheritDoc EffectClaims.complete} */
  async complete(token: ClaimToken, record: EffectRecordInput): Promise<FencedResult> {
    checkStorableFields(token.key, { ...record, owner: token.owner });
    const row = await this.completes.run([...tokenValues(token), ...this.cols(record)]);
    return row === undefined ? this.lost(token.key) : { status: 'ok', record: checked(token.key, row) };
  }

  /** {@inheritDoc EffectClaims.release} */
  async release(token: ClaimToken): Promise<FencedResult> {
    checkStorableFields(token.key, token);
    const rows = await this.query(this.sql.release, tokenValues(token));
    return rows.length === 0 ? this.lost(token.key) : { status: 'ok' };
  }

  /** {@inheritDoc EffectClaims.renew} */
  async renew(token: ClaimToken, leaseMs: number): Promise<FencedResult> {
    const lease = checkLease(token.key, leaseMs);
    checkStorableFields(token.key, token);
    const rows = await this.query(this.sql.renew, [...tokenValues(token), lease]);
    return rows.length === 0 ? this.lost(token.key) : { status: 'ok' };
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
    for (const [text, extra] of [
      [this.sql.prune, []],
      [this.sql.pruneClaims, [this.retentionMs]],
    ] as const) {
      while (deleted < limit) {
        const batch = Math.min(PRUNE_BATCH, limit - deleted);
        const changes = (await this.conn.exec(text, [batch, ...extra])).rowCount ?? 0;
        deleted += changes;
        if (changes < batch) break;
      }
    }
    const ages = [this.retentionMs, Math.max(this.retentionMs, ABANDONED_RUN_MS)];
    for (const [text, extra] of [
      [this.conv.pruneEntries, ages],
      [this.conv.prunePayloads, []],
    ] as const) {
      while (deleted < limit) {
        const batch = Math.min(PRUNE_BATCH, limit - deleted);
        const changes = (await this.conn.exec(text, [batch, ...extra])).rowCount ?? 0;
        deleted += changes;
        if (changes < batch) break;
      }
    }
    // Executions and run rows whose run has no entries left: bookkeeping, not counted.
    await this.conn.exec(this.conv.pruneExecutions, [PRUNE_BATCH, ...ages]);
    await this.conn.exec(this.conv.pruneRuns, [PRUNE_BATCH, ...ages]);
    return deleted;
  }

  /**
   * Writes the entries the database lacks and marks the execution open (or closed), in one
   * statement (shared with the appends of other runs issued in the same turn); refuses (writing
   * nothing) an entry whose key the database holds with other content.
   */
  async appendConversation(
    runId: string,
    entries: readonly ConversationEntry[],
    options: AppendConversationOptions = {},
  ): Promise<void> {
    const execution = options.execution ?? '';
    const previous = options.previousExecution;
    const order = checkedWriteOrder(options.writtenBy);
    const { planted, error } = await this.appends.run({
      runId,
      entries,
      execution,
      open: options.close !== true,
      previous: previous === undefined || previous === execution ? null : previous,
      activity: order?.activity ?? null,
      attempt: order?.attempt ?? null,
    });
    if (error !== undefined) throw error;
    if (planted !== undefined) throw plantedEntry(runId, planted);
  }

  private async appendAlone(item: PgAppend): Promise<AppendOutcome> {
    const [row] = await this.query<{ key: string }>(this.conv.append, appendValues(item));
    return row === undefined ? {} : { planted: row.key };
  }

  /** The conversation ending at `head`, oldest entry first, in one recursive query; `undefined` for an unknown head. */
  async loadConversation(head: string): Promise<ConversationEntry[] | undefined> {
    return chainFromRows(head, await this.query(this.conv.chain, [head]));
  }

  /** {@inheritDoc ConversationStore.putPayload} */
  async putPayload(key: string, data: Uint8Array): Promise<void> {
    await this.conn.exec(this.conv.putPayload, [
      key,
      Buffer.from(data.buffer, data.byteOffset, data.byteLength),
      this.retentionMs,
    ]);
  }

  /** {@inheritDoc ConversationStore.getPayload} */
  async getPayload(key: string): Promise<Uint8Array | undefined> {
    const [row] = await this.query<{ data: Buffer }>(this.conv.getPayload, [key]);
    return row === undefined ? undefined : new Uint8Array(row.data.buffer, row.data.byteOffset, row.data.byteLength);
  }

  /** Finished, unexpired records whose key starts with `prefix` (a run id, say), in key order. */
  async list(prefix: string): Promise<EffectRecord[]> {
    checkStorable(prefix, 'prefix');
    const hashedEnd = prefixUpperBound(HASHED_KEY_PREFIX);
    const values = [prefix, prefixUpperBound(prefix), HASHED_KEY_PREFIX, hashedEnd];
    const rows = await this.query<PgRecordRow>(this.sql.list, values);
    return rows.map(toRecord).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  /** Ends the pool if the store created it; a pool handed in is left to its owner. */
  async close(): Promise<void> {
    await this.conn.close();
  }

  private async lost(key: string): Promise<FencedResult> {
    const record = await this.get(key);
    return record === undefined ? { status: 'lost' } : { status: 'lost', record };
  }

  private cols(record: EffectRecordInput): unknown[] {
    const c = toRecordColumns(record);
    const tail = [c.origin, c.result, c.resultUndefined, c.recordedAt, this.retentionMs, c.unserializable];
    return [c.toolName, c.runId, c.attempt, c.fingerprint, ...tail];
  }

  private async query<R>(text: string, values: unknown[]): Promise<R[]> {
    return (await this.conn.exec(text, values)).rows as R[];
  }
}

interface ClaimRow {
  readonly fence: string;
  readonly previous_owner: string | null;
}

/** One run's conversation append, as its statement takes it. */
interface PgAppend {
  readonly runId: string;
  readonly entries: readonly ConversationEntry[];
  readonly execution: string;
  readonly open: boolean;
  /** The execution this one continues, when it is another. */
  readonly previous: string | null;
  readonly activity: number | null;
  readonly attempt: number | null;
}

/** How an append in a batch ended: written, refused for an entry planted under `planted`, or failed. */
interface AppendOutcome {
  readonly planted?: string;
  readonly error?: Error;
}

function appendValues(a: PgAppend): unknown[] {
  const { entries } = a;
  return [
    entries.map((e) => e.key),
    entries.map((e) => e.parent),
    entries.map((e) => e.json),
    a.runId,
    a.execution,
    a.open,
    a.previous,
    a.activity,
    a.attempt,
  ];
}

/** The parameters of `appendMany`: entries flattened with their item's number, then the items. */
function appendManyValues(items: ReadonlyArray<readonly [number, PgAppend]>): unknown[] {
  const entries = items.flatMap(([n, a]) => a.entries.map((e) => [n, e] as const));
  return [
    entries.map(([n]) => n),
    entries.map(([, e]) => e.key),
    entries.map(([, e]) => e.parent),
    entries.map(([, e]) => e.json),
    ...columnsOf(
      items.map(([n, a]) => [n, a.runId, a.execution, a.open, a.previous, a.activity, a.attempt]),
      7,
    ),
  ];
}

/** The `n` parameter arrays of a batched statement: column `i` of every item. */
function columnsOf(items: ReadonlyArray<readonly unknown[]>, n: number): unknown[][] {
  return Array.from({ length: n }, (_, i) => items.map((values) => values[i] ?? null));
}

function tokenValues(token: ClaimToken): unknown[] {
  return [storageKey(token.key), token.key, token.owner, token.fence];
}

function checked(key: string, row: PgRecordRow): EffectRecord {
  if (row.key !== key) throw collision(key);
  return toRecord(row);
}

function collision(key: string): EffectStoreError {
  return new EffectStoreError(
    `Effect key "${key.slice(0, 80)}…" shares its stored (hashed) key with another key; refusing to mix their records.`,
  );
}
