// Shared setup of the reliability tests: the test workflows bundled once per file.
import { bundleWorkflowCode, type WorkflowBundle } from '@temporalio/worker';
import { fileURLToPath } from 'node:url';

const quiet = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};

/** The library's workflows (test/fixtures/workflows.ts), bundled for the sandbox. */
export function bundleTestWorkflows(file = '../fixtures/workflows.ts'): Promise<WorkflowBundle> {
  return bundleWorkflowCode({ workflowsPath: fileURLToPath(new URL(file, import.meta.url)), logger: quiet });
}
