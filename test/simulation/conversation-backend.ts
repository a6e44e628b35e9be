import type { DatabaseSync } from 'node:sqlite';
import type { ConversationStore } from '../../src/stores/conversation-store.js';
import { MemoryConversationStore } from '../../src/stores/memory-conversation.js';
import { SqliteEffectStore } from '../../src/stores/sqlite-effect-store.js';
import { WalkGuardMap } from './walk-guard.js';

/** A conversation row as someone with write access to the store sees it. */
export interface RawEntry {
  readonly key: string;
  readonly parent: string;
  readonly json: string;
}

/**
 * One real conversation store under a simulated history, with the access an operator (or an
 * adversary) with the database's credentials has: the rows read and written behind the store's
 * back. The store's clock is the simulation's: `now` for the memory store, SQLite's
 * `julianday('now')` replaced by the virtual clock for the SQLite store.
 */
export interface ConversationBackend {
  readonly kind: 'memory' | 'sqlite';
  readonly store: ConversationStore;
  prune(limit: number): Promise<number>;
  /** Every stored entry, by key. */
  rows(): Map<string, RawEntry>;
  /** Rewrites an entry's columns in place (its key stays). */
  update(key: string, change: Partial<Omit<RawEntry, 'key'>>): void;
  /** Inserts a row of run `runId` under `key` (before any writer). */
  plant(runId: string, entry: RawEntry): void;
  remove(key: string): void;
  close(): Promise<void>;
}

/** The store's clock in epoch ms (the virtual clock's `storeNow`). */
export type StoreClock = () => number;

export async function openBackend(
  kind: 'memory' | 'sqlite',
  retentionMs: number,
  now: StoreClock,
): Promise<ConversationBackend> {
  return kind === 'memory' ? memoryBackend(retentionMs, now) : sqliteBackend(retentionMs, now);
}

interface MemoryRow extends RawEntry {
  readonly runId: string;
}

function memoryBackend(retentionMs: number, now: StoreClock): ConversationBackend {
  const store = new MemoryConversationStore({ retentionMs, now });
  const inside = store as unknown as { entries: Map<string, MemoryRow> };
  // A walk that follows a parent cycle never yields: the guard throws out of it instead of
  // letting the simulator spin (the violation is then reported like any other unnamed error).
  const entries = new WalkGuardMap<string, MemoryRow>(inside.entries);
  inside.entries = entries;
  return {
    kind: 'memory',
    store,
    prune: (limit) => Promise.resolve(store.prune(limit)),
    rows: () => new Map([...entries.unguarded()].map(([k, e]) => [k, { key: e.key, parent: e.parent, json: e.json }])),
    update(key, change) {
      const row = entries.peek(key);
      if (row !== undefined) entries.set(key, { ...row, ...change });
    },
    plant(runId, entry) {
      // Shaped like a row the store wrote for the run (whatever else it keeps per row).
      const sibling = [...entries.unguarded().values()].find((e) => e.runId === runId);
      entries.set(entry.key, { ...(sibling ?? {}), runId, ...entry });
    },
    remove: (key) => void entries.delete(key),
    close: () => Promise.resolve(),
  };
}

async function sqliteBackend(retentionMs: number, now: StoreClock): Promise<ConversationBackend> {
  const store = new SqliteEffectStore({ path: ':memory:', retentionMs });
  await store.loadConversation('open'); // opens the database: its clock can then be replaced
  const db = (store as unknown as { conn: { db: DatabaseSync } }).conn.db;
  // SQLITE_NOW_MS is julianday('now'): the database's clock becomes the virtual one.
  db.function('julianday', { varargs: true, deterministic: false }, () => now() / 86_400_000 + 2_440_587.5);
  const t = '"chamvi_effects_conv"';
  const columns = (db.prepare(`PRAGMA table_info(${t})`).all() as Array<{ name: string }>).map((c) => c.name);
  return {
    kind: 'sqlite',
    store,
    prune: (limit) => store.prune(limit),
    rows() {
      const all = db.prepare(`SELECT key, parent, json FROM ${t}`).all() as unknown as RawEntry[];
      return new Map(all.map((r) => [r.key, { key: r.key, parent: r.parent, json: r.json }]));
    },
    update(key, change) {
      for (const [column, value] of Object.entries(change)) {
        db.prepare(`UPDATE ${t} SET ${column} = ? WHERE key = ?`).run(value, key);
      }
    },
    plant(runId, entry) {
      // Other columns (an execution, say) copied from a row the store wrote for the run, if any.
      const extra = columns.filter((c) => !['key', 'parent', 'json', 'run_id'].includes(c));
      const sibling = db.prepare(`SELECT * FROM ${t} WHERE run_id = ? LIMIT 1`).get(runId) as
        Record<string, string | number | null> | undefined;
      const names = ['key', 'parent', 'json', 'run_id', ...extra.filter((c) => sibling?.[c] !== undefined)];
      const values = [entry.key, entry.parent, entry.json, runId, ...names.slice(4).map((c) => sibling?.[c] ?? null)];
      db.prepare(`INSERT OR REPLACE INTO ${t} (${names.join(', ')}) VALUES (${names.map(() => '?').join(', ')})`).run(
        ...values,
      );
    },
    remove: (key) => void db.prepare(`DELETE FROM ${t} WHERE key = ?`).run(key),
    close: () => store.close(),
  };
}
