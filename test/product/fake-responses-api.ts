// A stand-in for OpenAI's Responses API (`POST /v1/responses`, what `openai('gpt-4o-mini')` of
// @ai-sdk/openai calls), so the README tutorial's agent runs unchanged and offline: point
// OPENAI_BASE_URL at it. The first call of a conversation asks for the `comment` tool on issue 42;
// once the request carries that call's output it answers "Done.".
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeResponsesApi {
  /** `http://127.0.0.1:<port>/v1`, for OPENAI_BASE_URL. */
  readonly baseUrl: string;
  /** The request bodies received, in order. */
  readonly requests: unknown[];
  close(): Promise<void>;
}

interface ResponsesRequest {
  readonly model?: string;
  readonly input?: ReadonlyArray<{ readonly type?: string }>;
}

export async function startFakeResponsesApi(): Promise<FakeResponsesApi> {
  const requests: unknown[] = [];
  let calls = 0;
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/responses') {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
        return;
      }
      const body = JSON.parse(raw) as ResponsesRequest;
      requests.push(body);
      calls += 1;
      const toolDone = (body.input ?? []).some((item) => item.type === 'function_call_output');
      const output = toolDone
        ? [
            {
              type: 'message',
              id: `msg_${calls}`,
              role: 'assistant',
              status: 'completed',
              content: [{ type: 'output_text', text: 'Done.', annotations: [] }],
            },
          ]
        : [
            {
              type: 'function_call',
              id: `fc_${calls}`,
              call_id: `call_${calls}`,
              name: 'comment',
              arguments: JSON.stringify({ issue: 42, body: 'Thanks for the report; we are on it.' }),
              status: 'completed',
            },
          ];
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id: `resp_${calls}`,
          object: 'response',
          created_at: Math.floor(Date.now() / 1000),
          model: body.model ?? 'gpt-4o-mini',
          status: 'completed',
          output,
          usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
