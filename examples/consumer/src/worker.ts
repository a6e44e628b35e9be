import { createAgentWorker } from '@chamvi/temporal/worker';
import { responder } from './agents.js';

// Worker and client (client.ts) find Temporal at one address: TEMPORAL_ADDRESS, default localhost:7233.
const worker = await createAgentWorker({
  address: process.env.TEMPORAL_ADDRESS ?? 'localhost:7233',
  taskQueue: 'responder',
  agents: [responder],
  // an SQLite file (its folder is created), or postgres://… shared by every worker of the task queue
  store: process.env.CHAMVI_STORE ?? '.chamvi/effects.db',
});
await worker.run(); // until Ctrl-C (SIGINT) or SIGTERM
