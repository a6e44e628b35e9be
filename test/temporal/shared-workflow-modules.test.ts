import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import { scriptedModel } from '../../testing/scripted-model.js';
import { createTimeSkippingEnvironment } from '../../testing/test-environment.js';
import { chamviWorkflowsPath, createAgentWorker } from '../../worker/index.js';
import { defineAgent } from '../../src/index.js';
import type { libraryModulesSharedWorkflow } from '../fixtures/workflows.js';
import { quietLogger } from '../fixtures/bundle.js';

// The library's workflow modules are preloaded into the workflow thread's reusable V8 context
// (`chamviPlugin`'s `configureBundler`), so every run of the thread shares one copy of them. That
// is safe only while no module keeps state at module level: the last test holds the modules to it.

const fixtures = fileURLToPath(new URL('../fixtures/workflows.ts', import.meta.url));
let env: TestWorkflowEnvironment;

beforeAll(async () => {
  env = await createTimeSkippingEnvironment();
}, 120_000);

afterAll(async () => {
  await env?.teardown();
});

const agent = defineAgent({ name: 'quiet', model: scriptedModel([{ text: 'ok' }]), instructions: 'Say ok.' });

/** What two runs in a row on `worker` answer (the second one runs in the context the first left). */
async function shared(worker: Worker, taskQueue: string): Promise<boolean[]> {
  return worker.runUntil(async () => {
    const answers: boolean[] = [];
    for (const run of [1, 2]) {
      answers.push(
        await env.client.workflow.execute<typeof libraryModulesSharedWorkflow>('libraryModulesSharedWorkflow', {
          taskQueue,
          workflowId: `shared-${run}-${randomUUID()}`,
        }),
      );
    }
    return answers;
  });
}

describe('the library workflow modules one workflow thread runs', () => {
  it('are one shared copy in a worker the plugin bundles', async () => {
    const taskQueue = `q-${randomUUID()}`;
    const worker = await createAgentWorker({
      connection: env.nativeConnection,
      taskQueue,
      agents: [agent],
      store: new MemoryEffectStore(),
      workflowsPath: fixtures,
    });
    expect(await shared(worker, taskQueue)).toEqual([true, true]);
  }, 120_000);

  it('are a copy per run in a bundle built without the preload (what the check above tells apart)', async () => {
    const taskQueue = `q-${randomUUID()}`;
    const workflowBundle = await bundleWorkflowCode({ workflowsPath: fixtures, logger: quietLogger });
    const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle });
    expect(await shared(worker, taskQueue)).toEqual([false, false]);
  }, 120_000);

  it('keep no state at module level: every top-level value is a constant, a frozen export or read-only', async () => {
    const { code } = await bundleWorkflowCode({ workflowsPath: chamviWorkflowsPath(), logger: quietLogger });
    const modules = [...new Set([...code.matchAll(/"\.\/((?:[\w-]+\/)+[\w.-]+\.ts)"/g)].map((m) => m[1] ?? ''))]
      .filter((path) => !path.startsWith('node_modules/'))
      .sort();
    expect(modules).toContain('workflows/agent-loop.ts');
    const root = fileURLToPath(new URL('../../', import.meta.url));
    const problems = modules.flatMap((path) => moduleLevelState(path, readFileSync(root + path, 'utf8')));
    expect(problems).toEqual([]);
  }, 120_000);

  it('the audit finds module-level state (what the test above relies on)', () => {
    const planted = [
      'let calls = 0;',
      'const seen = new Map<string, number>();',
      'const pending: string[] = [];',
      'register();',
      'export class Counter { static count = 0; }',
    ].join('\n');
    expect(moduleLevelState('planted.ts', planted)).toHaveLength(5);
    const fine = [
      "const VALUES: ReadonlyMap<string, number> = new Map([['a', 1]]);",
      'const UNITS: Readonly<Record<string, number>> = { s: 1 };',
      'export const OPTIONS = { retry: { maximumAttempts: 3 } };',
      "const NAMES = ['a', 'b'] as const;",
      'export class Quiet { static readonly errorName = "Quiet"; }',
    ].join('\n');
    expect(moduleLevelState('fine.ts', fine)).toEqual([]);
  });
});

/**
 * What in a module's top level could hold one run's state for the next, when the module is shared:
 * a `let` or `var`, a statement that runs at load, a mutable static, and a module-private object
 * (a collection, an array or object literal) not typed read-only. Exports need no annotation:
 * Temporal deep-freezes what a preloaded module exports.
 */
function moduleLevelState(path: string, source: string): string[] {
  const file = ts.createSourceFile(path, source, ts.ScriptTarget.Latest, true);
  const problems: string[] = [];
  const at = (node: ts.Node, what: string) =>
    problems.push(`${path}:${file.getLineAndCharacterOfPosition(node.getStart()).line + 1} ${what}`);
  const exported = (node: ts.Node) =>
    ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
  for (const statement of file.statements) {
    if (ts.isVariableStatement(statement)) {
      if ((statement.declarationList.flags & ts.NodeFlags.Const) === 0) {
        at(statement, 'a module-level let or var');
        continue;
      }
      for (const declaration of statement.declarationList.declarations) {
        const init = declaration.initializer;
        const mutable =
          init !== undefined &&
          (ts.isNewExpression(init) || ts.isArrayLiteralExpression(init) || ts.isObjectLiteralExpression(init));
        const readOnly = declaration.type !== undefined && /^(Readonly|readonly )/.test(declaration.type.getText(file));
        if (mutable && !exported(statement) && !readOnly)
          at(declaration, 'a module-private object not typed read-only');
      }
    } else if (ts.isExpressionStatement(statement)) {
      at(statement, 'a statement that runs when the module loads');
    } else if (ts.isClassDeclaration(statement)) {
      for (const member of statement.members) {
        const modifiers = ts.canHaveModifiers(member) ? (ts.getModifiers(member) ?? []) : [];
        const isStatic = modifiers.some((m) => m.kind === ts.SyntaxKind.StaticKeyword);
        const isReadonly = modifiers.some((m) => m.kind === ts.SyntaxKind.ReadonlyKeyword);
        if (ts.isPropertyDeclaration(member) && isStatic && !isReadonly) at(member, 'a mutable static property');
      }
    }
  }
  return problems;
}
