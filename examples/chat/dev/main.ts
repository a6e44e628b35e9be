// `npm run example:chat`: starts the chat example on the embedded defaults and prints its URL.
// CHAT_PORT picks the page's port (default 3000, or a free one when 3000 is taken); TEMPORAL_ADDRESS
// uses a running Temporal server instead of starting a dev server. Ctrl-C stops everything.
import { portFree } from '../../../demo/dev-server.js';
import { stopChildrenOnExit } from '../../../demo/child-processes.js';
import { startChatExample } from './chat-example.js';

const wanted = Number(process.env['CHAT_PORT'] ?? 3000);
const port = (await portFree(wanted)) ? wanted : 0;
const t0 = Date.now();
const say = (line: string) => process.stdout.write(`[${((Date.now() - t0) / 1000).toFixed(1)}s] ${line}\n`);
const example = await startChatExample({ onProgress: say, port });
stopChildrenOnExit(() => void example.stop());
say(`Temporal: ${example.temporal.address}${example.temporal.uiUrl ? `; web UI ${example.temporal.uiUrl}` : ''}`);
say(`Issue tracker: ${example.github.url} (acme/widgets #1 is open)`);
say(`Worker: pid ${example.worker.pid() ?? '?'} (started again when it dies; logs in .chamvi/chat/worker-<n>.log)`);
say(`Effect store: ${example.store}`);
process.stdout.write(
  `\nChat page: ${example.url}\n\nAsk it to answer issue #1, approve the comment, and while the reply streams kill the worker:\n` +
    `  kill -9 $(cat .chamvi/chat/worker.pid)\n`,
);
