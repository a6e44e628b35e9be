import { TestWorkflowEnvironment } from '@temporalio/testing';
import { temporalExecutable } from '../demo/temporal-binaries.js';

/**
 * The Temporal time-skipping test environment, with the test server found locally (env var,
 * PATH, `.tools/py/bin`) before the SDK would download it. Timers of days complete at once while
 * no activity runs. Call `teardown()` when done.
 */
export async function createTimeSkippingEnvironment(): Promise<TestWorkflowEnvironment> {
  const executable = temporalExecutable('test-server');
  return TestWorkflowEnvironment.createTimeSkipping(executable === undefined ? {} : { server: { executable } });
}

/**
 * A full Temporal dev server (`temporal server start-dev`), for what the time-skipping server
 * lacks (workflow reset, several worker processes). Found locally like the test server.
 */
export async function createDevServerEnvironment(): Promise<TestWorkflowEnvironment> {
  const executable = temporalExecutable('cli');
  return TestWorkflowEnvironment.createLocal({
    server: { ...(executable === undefined ? {} : { executable }), ui: false, extraArgs: ['--log-level', 'error'] },
  });
}
