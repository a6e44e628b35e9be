import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Worker, WorkerPlugin } from '@temporalio/worker';
import { ChamviError } from '../src/errors/chamvi-error.js';

/** The environment variables {@link workerHealthFromEnv} reads. */
export const HEALTH_PORT_ENV = 'CHAMVI_HEALTH_PORT';
export const HEALTH_HOST_ENV = 'CHAMVI_HEALTH_HOST';

/** Where the worker answers health checks. @public */
export interface WorkerHealthOptions {
  /** TCP port; 0 picks a free one (see `onListening`). */
  readonly port: number;
  /** Interface to listen on. Default `127.0.0.1`; `0.0.0.0` for probes from outside (Kubernetes). */
  readonly host?: string;
  /** Called once the endpoint listens, with its URL (`http://host:port/health`). */
  readonly onListening?: (url: string) => void;
}

/** The body of a health answer. @public */
export interface WorkerHealthReport {
  /** `ok` while the worker polls its task queue, else `unavailable`. */
  readonly status: 'ok' | 'unavailable';
  /** Temporal's worker state: `INITIALIZED`, `RUNNING`, `STOPPING`, `DRAINING`, `DRAINED`, `STOPPED`, `FAILED`. */
  readonly state: string;
  /** The task queue the worker polls. */
  readonly taskQueue: string;
}

/** A health option is unusable (a port that is not a number, one already in use). Not retryable as it is. */
export class WorkerHealthError extends ChamviError {
  static override readonly errorName = 'WorkerHealthError';
}

/**
 * The health endpoint `CHAMVI_HEALTH_PORT` (and `CHAMVI_HEALTH_HOST`) ask for, or `undefined`
 * when the port is unset or empty.
 *
 * @throws WorkerHealthError for a port that is not an integer from 0 to 65535.
 * @public
 */
export function workerHealthFromEnv(env: NodeJS.ProcessEnv = process.env): WorkerHealthOptions | undefined {
  const raw = env[HEALTH_PORT_ENV];
  if (raw === undefined || raw.trim() === '') return undefined;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new WorkerHealthError(`${HEALTH_PORT_ENV}="${raw}" is not a TCP port; set it to a number from 0 to 65535.`);
  }
  const host = env[HEALTH_HOST_ENV];
  return host === undefined || host === '' ? { port } : { port, host };
}

/**
 * A worker plugin that serves `GET /health` while the worker runs: `200` with
 * {@link WorkerHealthReport} `status: 'ok'` while Temporal's worker state is `RUNNING` (it polls
 * its task queue), `503` before that, while it drains and stops. It listens when the worker's
 * `run()` starts and closes when the run ends, so a stopped or crashed worker answers nothing;
 * a blocked event loop answers nothing either, which a probe with a timeout reports as unhealthy.
 *
 * @throws WorkerHealthError (from `run()`) when the endpoint cannot listen, for example on a port in use.
 * @public
 */
export function workerHealthPlugin(options: WorkerHealthOptions): WorkerPlugin {
  return {
    name: 'chamvi.health',
    async runWorker(worker: Worker, next: (w: Worker) => Promise<void>): Promise<void> {
      const server = await listen(worker, options);
      try {
        await next(worker);
      } finally {
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    },
  };
}

function report(worker: Worker): WorkerHealthReport {
  const state = worker.getState();
  return { status: state === 'RUNNING' ? 'ok' : 'unavailable', state, taskQueue: worker.options.taskQueue };
}

async function listen(worker: Worker, options: WorkerHealthOptions): Promise<Server> {
  const host = options.host ?? '127.0.0.1';
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/health') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: GET /health\n');
      return;
    }
    const body = report(worker);
    res
      .writeHead(body.status === 'ok' ? 200 : 503, { 'content-type': 'application/json', 'cache-control': 'no-store' })
      .end(`${JSON.stringify(body)}\n`);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error) =>
      reject(
        new WorkerHealthError(
          `The worker's health endpoint cannot listen on ${host}:${options.port} (${error.message}); choose another ${HEALTH_PORT_ENV}.`,
          { cause: error },
        ),
      ),
    );
    server.listen(options.port, host, () => resolve());
  });
  // Keep-alive probes must not hold the process open after the worker stops.
  server.unref();
  const { port } = server.address() as AddressInfo;
  options.onListening?.(`http://${host.includes(':') ? `[${host}]` : host}:${port}/health`);
  return server;
}
