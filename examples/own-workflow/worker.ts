// The worker for workflows.ts: Temporal's own Worker.create with the chamvi plugin, which
// registers the agent activities and leaves the workflows to the worker's workflowsPath.
import { openai } from '@ai-sdk/openai';
import { NativeConnection, Worker } from '@temporalio/worker';
import { fileURLToPath } from 'node:url';
import { defineAgent } from '@chamvi/temporal';
import { createEffectStore } from '@chamvi/temporal/stores';
import { chamviPlugin } from '@chamvi/temporal/worker';

const responder = defineAgent({ name: 'responder', model: openai('gpt-4o-mini'), instructions: 'Answer briefly.' });

const worker = await Worker.create({
  connection: await NativeConnection.connect({ address: process.env['TEMPORAL_ADDRESS'] ?? 'localhost:7233' }),
  taskQueue: 'patient',
  workflowsPath: fileURLToPath(new URL('./workflows.js', import.meta.url)),
  plugins: [chamviPlugin({ agents: [responder], store: createEffectStore('.chamvi/effects.db') })],
});
await worker.run();
