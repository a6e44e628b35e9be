import { Client, Connection } from '@temporalio/client';
import { startAgentRun } from '@chamvi/temporal/client';

const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS ?? 'localhost:7233' });
try {
  const client = new Client({ connection });
  const prompt = process.argv[2] ?? 'Answer issue 42: the export button does nothing.';
  const handle = await startAgentRun(client, { agent: 'responder', prompt, taskQueue: 'responder' });
  const { text, effects } = await handle.result(); // effects: [{ toolName, key, outcome, attempts }]
  console.log(text);
  for (const e of effects) console.log(`${e.toolName} ${e.outcome} after ${e.attempts} attempt(s): ${e.key}`);
} finally {
  await connection.close();
}
