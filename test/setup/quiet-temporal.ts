// Keeps Temporal's worker and core logs to errors in tests, so failures stand out. Runs before
// each test file; the runtime can be installed once per process, later files reuse it.
import { DefaultLogger, makeTelemetryFilterString, Runtime } from '@temporalio/worker';

try {
  Runtime.install({
    logger: new DefaultLogger('ERROR'),
    telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR' }) } },
  });
} catch {
  // Already installed in this jest worker process.
}
