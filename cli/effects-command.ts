import { inspectEffects, type EffectInspectionRow } from '../src/stores/index.js';
import type { ConnectionOptions } from '@temporalio/client';
import { EFFECTS_HELP } from './help.js';
import { parseFlags, required, TEMPORAL_OPTIONS } from './flags.js';
import { temporalSettings } from './settings.js';
import { openStore } from './store-flag.js';
import { renderTable } from './table.js';
import { connectClient, temporalReachable } from './temporal-connection.js';

/** The first run id of the latest run of `workflowId`, or undefined when no server or no such workflow. */
export async function firstRunIdOf(
  workflowId: string,
  settings: { address: string; namespace: string; connectionOptions?: ConnectionOptions },
): Promise<string | undefined> {
  const { address, namespace, connectionOptions } = settings;
  if (!(await temporalReachable(address, undefined, connectionOptions))) return undefined;
  const client = await connectClient(address, namespace, connectionOptions ? { connectionOptions } : {});
  try {
    const history = await client.workflow.getHandle(workflowId).fetchHistory();
    return history.events?.[0]?.workflowExecutionStartedEventAttributes?.firstExecutionRunId ?? undefined;
  } catch {
    return undefined;
  } finally {
    await client.connection.close();
  }
}

/**
 * A record as `chamvi effects` prints it, in the words of the run's report (`chamvi run --wait`,
 * the progress query): `toolName`, `outcome` (the record's origin: `executed`, `reconciled`) and
 * `attempts` (the attempt that recorded it).
 */
export interface EffectRecordRow {
  readonly toolName: string;
  readonly key: string;
  readonly outcome: string;
  readonly attempts?: number;
  readonly recordedAt: string;
  readonly expiresAt?: string;
}

/** A store row in the report's vocabulary. */
export function recordRow(row: EffectInspectionRow): EffectRecordRow {
  return {
    toolName: row.tool,
    key: row.key,
    outcome: row.origin,
    ...(row.attempt !== undefined ? { attempts: row.attempt } : {}),
    recordedAt: row.recordedAt,
    ...(row.expiresAt !== undefined ? { expiresAt: row.expiresAt } : {}),
  };
}

export function inspectionTable(rows: readonly EffectInspectionRow[]): string {
  return renderTable(
    ['tool', 'key', 'outcome', 'attempts', 'recorded at'],
    rows
      .map(recordRow)
      .map((r) => [r.toolName, r.key, r.outcome, r.attempts === undefined ? '-' : String(r.attempts), r.recordedAt]),
  );
}

export async function effectsCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(
    'effects',
    args,
    { ...TEMPORAL_OPTIONS, store: { type: 'string' }, json: { type: 'boolean' } },
    1,
  );
  if (values.help) {
    process.stdout.write(`${EFFECTS_HELP}\n`);
    return 0;
  }
  const id = required('effects', 'a run id or workflow id', positionals[0], 'chamvi effects <id> --store <spec>');
  const store = await openStore('effects', values.store);
  try {
    let runId = id;
    let rows = await inspectEffects(store, `${id}:`);
    if (rows.length === 0) {
      const resolved = await firstRunIdOf(id, temporalSettings(values));
      if (resolved !== undefined) {
        runId = resolved;
        rows = await inspectEffects(store, `${resolved}:`);
      }
    }
    if (values.json) {
      process.stdout.write(`${JSON.stringify({ runId, effects: rows.map(recordRow) }, null, 2)}\n`);
    } else if (rows.length > 0) {
      const via = runId === id ? '' : ` (workflow ${id})`;
      process.stdout.write(`effects of run ${runId}${via}:\n${inspectionTable(rows)}\n`);
    }
    if (rows.length === 0) {
      process.stderr.write(`chamvi: effects: no effect records for "${id}" in this store\n`);
      return 1;
    }
    return 0;
  } finally {
    await store.close();
  }
}
