// The chat example's worker process: `node --import tsx examples/chat/dev/worker.ts`, started (and
// restarted when it dies) by the example's launcher. Configured by env:
//   TEMPORAL_ADDRESS, CHAT_TASK_QUEUE, CHAT_STORE (a store spec: the effect store, the conversation
//   and the run stream), CHAT_GITHUB_URL, CHAMVI_APPROVAL_SECRET,
//   CHAT_MARKER_SECRET, CHAT_TOKEN_MS (ms per streamed word), CHAT_WORKFLOW_BUNDLE (a prebuilt
//   workflow bundle, so a restarted worker polls within a second or two instead of bundling again),
//   CHAT_CRASH_FLAG (a file that, present right after a comment is posted, makes the worker die).
import { createAgentWorker } from '../../../worker/index.js';
import { chatAgentRegistration } from './chat-agent.js';

function required(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`examples/chat/dev/worker: ${name} is not set`);
  return value;
}

const tokenMs = process.env['CHAT_TOKEN_MS'];
const bundle = process.env['CHAT_WORKFLOW_BUNDLE'];
const crashFlag = process.env['CHAT_CRASH_FLAG'];
const worker = await createAgentWorker({
  address: required('TEMPORAL_ADDRESS'),
  taskQueue: required('CHAT_TASK_QUEUE'),
  store: required('CHAT_STORE'),
  // Model steps stream their text to the same SQLite file (its own table); the app reads it.
  stream: true,
  approvalSecret: required('CHAMVI_APPROVAL_SECRET'),
  health: false,
  agents: [
    chatAgentRegistration({
      githubUrl: required('CHAT_GITHUB_URL'),
      markerSecret: required('CHAT_MARKER_SECRET'),
      ...(tokenMs !== undefined ? { tokenMs: Number(tokenMs) } : {}),
      ...(crashFlag !== undefined ? { crashFlag } : {}),
    }),
  ],
  // A SIGKILLed worker never says goodbye: its sticky workflow tasks go to the shared queue after
  // this, not after the SDK's 10 s default, so the next worker continues the run within a second.
  workerOptions: {
    stickyQueueScheduleToStartTimeout: '1 second',
    ...(bundle !== undefined ? { workflowBundle: { codePath: bundle } } : {}),
  },
});
process.stdout.write('ready\n');
await worker.run();
