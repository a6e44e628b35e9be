// The public API as the committed reports (etc/api/, which `npm run api` keeps equal to the build)
// and the entry points' sources state it: a small root, each name exported by one entry point
// (others re-export it as a type, on purpose), and none of the workflow↔activity contract.
import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { countReports } from '../../scripts/api-count.js';

const root = (path: string): string => fileURLToPath(new URL(`../../${path}`, import.meta.url));
const counted = countReports(root('etc/api'));
const pkg = JSON.parse(readFileSync(root('package.json'), 'utf8')) as {
  exports: Record<string, string | { types: string }>;
};

/** Each entry point's source file: `./dist/worker/index.d.ts` -> `worker/index.ts`. */
const entrySources = Object.entries(pkg.exports).flatMap(([entry, target]) =>
  typeof target === 'object'
    ? [{ entry, file: target.types.replace(/^\.\/dist\//, '').replace(/\.d\.ts$/, '.ts') }]
    : [],
);

/** The names an entry point's source exports, and whether as a type only (`export type { X }`, `export { type X }`). */
function exportsOf(file: string): Map<string, { typeOnly: boolean }> {
  const source = ts.createSourceFile(file, readFileSync(root(file), 'utf8'), ts.ScriptTarget.Latest);
  const names = new Map<string, { typeOnly: boolean }>();
  for (const statement of source.statements) {
    if (!ts.isExportDeclaration(statement)) continue;
    if (statement.exportClause === undefined || !ts.isNamedExports(statement.exportClause)) {
      throw new Error(`${file}: \`export *\` re-exports names nobody chose; list them`);
    }
    for (const element of statement.exportClause.elements) {
      names.set(element.name.text, { typeOnly: statement.isTypeOnly || element.isTypeOnly });
    }
  }
  return names;
}

/** Names every `export` of the `common/` files declares: the contract between the workflow and its activities. */
function commonDeclarations(): Set<string> {
  const names = new Set<string>();
  for (const file of readdirSync(root('common')).filter((f) => f.endsWith('.ts') && f !== 'index.ts')) {
    const text = readFileSync(root(`common/${file}`), 'utf8');
    for (const match of text.matchAll(
      /^export (?:declare )?(?:interface|type|const|function|class) ([A-Za-z_$][\w$]*)/gm,
    )) {
      names.add(match[1] ?? '');
    }
  }
  return names;
}

/**
 * The shapes of `common/` that users hold, declared there because the workflow and its clients
 * share one definition: a run's report, progress and approvals, its conversation reference, and
 * the activity options of its input, the calls of a running step that have ended (with the tool
 * output the model gets), the trace a run's checkpoint carries, its sub-agent runs, and its usage and budget. Everything else there is internal.
 */
const PUBLIC_RUN_SHAPES = [
  'AgentProgress',
  'AppliedEffect',
  'CompensateOn',
  'CompensationReport',
  'agentProgressQuery',
  'ApprovalRecord',
  'BudgetExhaustion',
  'BudgetLimits',
  'BudgetLink',
  'BudgetState',
  'ChildRunReport',
  'ModelPrice',
  'RunBudget',
  'RunUsage',
  'ConversationRef',
  'JsonActivityOptions',
  'JsonMessage',
  'JsonToolOutput',
  'ModelStepActivityOptions',
  'PendingApproval',
  'RunEffectOutcome',
  'RunEffectReport',
  'RunTrace',
  'RunTraceContext',
  'RunTraceStep',
  'SettledToolCall',
  'StoreActivityOptions',
  'ToolActivityOptions',
];

describe('the public API', () => {
  it('has a report for every entry point of package.json, and no report of an entry point that is gone', () => {
    expect(Object.keys(counted.entries).sort()).toEqual(entrySources.map((e) => e.entry).sort());
  });

  it('the root exports at most 40 names: what an agent author writes', () => {
    expect(counted.entries['.']?.names.length).toBeLessThanOrEqual(40);
    expect(counted.entries['.']?.names).toEqual(
      expect.arrayContaining(['defineEffectTool', 'defineAgent', 'effectKeyOf', 'ChamviError', 'ToolContext']),
    );
  });

  it('the reports are complete: API Extractor left no warning in them (a forgotten export or a missing release tag fails npm run api)', () => {
    for (const [entry, { warnings }] of Object.entries(counted.entries))
      expect({ entry, warnings }).toEqual({ entry, warnings: {} });
  });

  it('a name exported by several entry points is a value in one of them at most, and a type re-export in the others', () => {
    const sources = new Map(entrySources.map(({ entry, file }) => [entry, exportsOf(file)]));
    for (const [name, entries] of Object.entries(counted.shared)) {
      const asValue = entries.filter((entry) => sources.get(entry)?.get(name)?.typeOnly === false);
      expect({ name, exportedAsValueBy: asValue.length <= 1 ? 'at most one' : asValue }).toEqual({
        name,
        exportedAsValueBy: 'at most one',
      });
    }
    // The sources say what the reports say.
    for (const { entry } of entrySources) {
      expect({ entry, names: [...(sources.get(entry)?.keys() ?? [])].sort() }).toEqual({
        entry,
        names: counted.entries[entry]?.names,
      });
    }
  });

  it('the workflow↔activity contract of common/ is not public: only the run shapes users hold are', () => {
    const internal = [...commonDeclarations()].filter((name) => !PUBLIC_RUN_SHAPES.includes(name));
    expect(internal).toEqual(
      expect.arrayContaining(['ModelStepInput', 'ToolCallPlan', 'ACTIVITY_NAMES', 'ToolCallInput']),
    );
    for (const [entry, { names }] of Object.entries(counted.entries)) {
      expect({ entry, contract: names.filter((n) => internal.includes(n)) }).toEqual({ entry, contract: [] });
    }
  });
});
