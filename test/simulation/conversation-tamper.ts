import type { JsonMessage } from '../../common/index.js';
import { chainEntries, conversationRoot } from '../../src/conversation/conversation-entry.js';
import { canonicalJson } from '../../src/json/canonical-json.js';
import type { RawEntry } from './conversation-backend.js';
import type { TamperKind } from './conversation-scenario.js';
import type { ConvWorld } from './conversation-world.js';

/** What someone with the database's credentials does to the rows, behind the store's back. */
export function tamper(world: ConvWorld, kind: TamperKind, pick: number): void {
  const { backend, judge, trace } = world;
  const rows = backend.rows();
  const keys = [...rows.keys()].sort();
  const target = keys[Math.floor(pick * keys.length)];
  const row = target === undefined ? undefined : rows.get(target);
  const touch = (key: string, what: string): void => {
    judge.touched.add(key);
    trace.log('world', `tamper: ${what} (${key.slice(0, 8)})`);
  };
  if (kind === 'plant') {
    plant(world, pick, touch);
    return;
  }
  if (row === undefined) return;
  switch (kind) {
    case 'edit': {
      const message = parsed(row.json);
      backend.update(row.key, { json: canonicalJson({ ...message, content: `forged: ${message.role}` }) });
      return touch(row.key, `edits the ${message.role} message of an entry`);
    }
    case 'garbage':
      backend.update(row.key, { json: row.json.slice(0, Math.floor(row.json.length / 2)) });
      return touch(row.key, "truncates an entry's json");
    case 'delete':
      backend.remove(row.key);
      return touch(row.key, 'deletes an entry');
    case 'self-parent':
      backend.update(row.key, { parent: row.key });
      return touch(row.key, 'makes an entry its own parent');
    case 'cycle': {
      const below = keys.find((k) => k !== row.key && descends(rows, k, row.key));
      backend.update(row.key, { parent: below ?? row.key });
      return touch(row.key, `points an entry's parent at ${below === undefined ? 'itself' : 'a descendant'}`);
    }
    case 'reparent': {
      const other = keys.find((k) => k !== row.key && k !== row.parent && !descends(rows, k, row.key));
      if (other === undefined) return;
      backend.update(row.key, { parent: other });
      return touch(row.key, "points an entry's parent at another chain's entry");
    }
  }
}

/** Plants a forged row under the key a running execution's next step will write. */
function plant(world: ConvWorld, pick: number, touch: (key: string, what: string) => void): void {
  const running = world.executions.filter((e) => e.status === 'running');
  const exec = running[Math.floor(pick * running.length)];
  if (exec === undefined) return;
  const stored = exec.stored;
  const head = chainEntries(conversationRoot(exec.runId), stored).at(-1)?.key ?? conversationRoot(exec.runId);
  const next = chainEntries(head, exec.full.slice(stored.length))[0];
  if (next === undefined || world.backend.rows().has(next.key)) return;
  const message = JSON.parse(next.json) as JsonMessage;
  const json = canonicalJson({ ...message, content: `planted: ${message.role}` });
  try {
    world.backend.plant(exec.runId, { key: next.key, parent: next.parent, json });
  } catch (error) {
    world.trace.log('world', `tamper: plant refused by the schema (${String(error)})`);
    return;
  }
  touch(next.key, `plants a forged ${message.role} message where ${exec.id} writes next`);
}

/** A row's message, or a stand-in when the row's json was already spoiled. */
function parsed(json: string): JsonMessage {
  try {
    return JSON.parse(json) as JsonMessage;
  } catch {
    return { role: 'user', content: '' };
  }
}

/** Whether the chain from `key` passes through `ancestor`. */
function descends(rows: ReadonlyMap<string, RawEntry>, key: string, ancestor: string): boolean {
  const seen = new Set<string>();
  for (let row = rows.get(key); row !== undefined && !seen.has(row.key); row = rows.get(row.parent)) {
    if (row.parent === ancestor) return true;
    seen.add(row.key);
  }
  return false;
}
