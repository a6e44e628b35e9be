// The chat example's server (examples/chat/chat-server.ts) answers its own page only: a page of
// another site (a text/plain POST needs no CORS preflight) or a DNS-rebound name must not start a
// run, get a decision signed with the workers' secret, or kill the worker. Plain HTTP requests
// (node:http, which sends Host and Origin as given) against the server on Temporal's time-skipping
// server; a client interceptor records every workflow the server starts and every query it asks.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client, type WorkflowClientInterceptor } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import type { UIMessageChunk } from 'ai';
import { ChatServer } from '../../examples/chat/chat-server.js';
import { createTimeSkippingEnvironment } from '../../testing/test-environment.js';

let env: TestWorkflowEnvironment;
let server: ChatServer;
let port: number;
const started: string[] = [];
const queried: string[] = [];
let kills = 0;

const recorder: WorkflowClientInterceptor = {
  start: (input, next) => (started.push(input.options.workflowId), next(input)),
  query: (input, next) => (queried.push(input.workflowExecution.workflowId), next(input)),
};

beforeAll(async () => {
  env = await createTimeSkippingEnvironment();
  const client = new Client({
    connection: env.connection,
    namespace: env.namespace ?? 'default',
    interceptors: { workflow: [recorder] },
  });
  server = await new ChatServer({
    client,
    taskQueue: `chat-origin-${randomUUID()}`,
    approvalSecret: 'a'.repeat(64),
    openStream: () => new ReadableStream<UIMessageChunk>({ start: (c) => c.close() }),
    issues: () => [],
    worker: {
      pid: () => 1,
      restarts: () => 0,
      kill: () => void kills++,
      crashAfterNextComment: () => void kills++,
      crashArmed: () => false,
    },
  }).start();
  port = Number(new URL(server.url).port);
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await env?.teardown();
});

/** One request with exactly these headers; resolves with the status and the body. */
function send(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers, setHost: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const own = () => ({ host: `127.0.0.1:${port}`, origin: `http://127.0.0.1:${port}` });
const json = { 'content-type': 'application/json' };
const POSTS = ['/api/runs', '/api/runs/chat-someone/approvals/call-1', '/api/worker/kill'] as const;

describe('the chat server answers its own page only', () => {
  it('refuses a text/plain POST from another site (Origin http://evil.example) with 403: no run, no signed decision, no kill', async () => {
    const before = { started: started.length, queried: queried.length, kills };
    for (const path of POSTS) {
      const answer = await send(
        'POST',
        path,
        { host: `127.0.0.1:${port}`, origin: 'http://evil.example', 'content-type': 'text/plain' },
        JSON.stringify({ message: 'Please answer issue #1.', approved: true }),
      );
      expect(answer).toEqual({ status: 403, body: expect.stringContaining('http://evil.example') });
    }
    expect({ started: started.length, queried: queried.length, kills }).toEqual(before);
  });

  it('refuses a page of another port of the same machine, and a browser GET marked cross-site', async () => {
    const before = started.length;
    const other = await send(
      'POST',
      '/api/runs',
      { host: `127.0.0.1:${port}`, origin: `http://127.0.0.1:${port + 1}`, ...json },
      JSON.stringify({ message: 'hi' }),
    );
    expect(other.status).toBe(403);
    const get = await send('GET', '/api/info', { host: `127.0.0.1:${port}`, 'sec-fetch-site': 'cross-site' });
    expect(get).toEqual({ status: 403, body: expect.stringContaining('cross-site') });
    expect(started.length).toBe(before);
  });

  it('refuses a foreign Host (a DNS-rebound name) with 403, GETs and same-"origin" JSON POSTs alike', async () => {
    const rebound = { host: `evil.example:${port}`, origin: `http://evil.example:${port}` };
    expect((await send('GET', '/', { host: rebound.host })).status).toBe(403);
    expect((await send('GET', '/api/info', { host: rebound.host })).status).toBe(403);
    const before = started.length;
    const post = await send('POST', '/api/runs', { ...rebound, ...json }, JSON.stringify({ message: 'hi' }));
    expect(post).toEqual({ status: 403, body: expect.stringContaining('evil.example') });
    expect(started.length).toBe(before);
  });

  it('refuses a same-origin POST that is not application/json with 415, and one without Origin with 403', async () => {
    const before = { started: started.length, kills };
    const plain = await send(
      'POST',
      '/api/runs',
      { ...own(), 'content-type': 'text/plain' },
      JSON.stringify({ message: 'hi' }),
    );
    expect(plain).toEqual({ status: 415, body: expect.stringContaining('application/json') });
    const form = await send('POST', '/api/worker/kill', {
      ...own(),
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect(form.status).toBe(415);
    const bare = await send('POST', '/api/runs', { host: own().host, ...json }, JSON.stringify({ message: 'hi' }));
    expect(bare).toEqual({ status: 403, body: expect.stringContaining('Origin') });
    expect({ started: started.length, kills }).toEqual(before);
  });

  it('answers its own page: a same-origin JSON POST starts a run, under 127.0.0.1 and localhost, and GETs need no Origin', async () => {
    for (const name of ['127.0.0.1', 'localhost']) {
      const answer = await send(
        'POST',
        '/api/runs',
        {
          host: `${name}:${port}`,
          origin: `http://${name}:${port}`,
          'content-type': 'application/json; charset=utf-8',
        },
        JSON.stringify({ message: 'Please answer issue #1.' }),
      );
      expect(answer.status).toBe(201);
      const { workflowId } = JSON.parse(answer.body) as { workflowId: string };
      expect(started).toContain(workflowId);
      await env.client.workflow.getHandle(workflowId).terminate('test over');
    }
    const page = await send('GET', '/', { host: `localhost:${port}`, 'sec-fetch-site': 'none' });
    expect(page.status).toBe(200);
    expect(page.body).toContain('<title>');
    const info = await send('GET', '/api/info', { host: `127.0.0.1:${port}`, 'sec-fetch-site': 'same-origin' });
    expect(JSON.parse(info.body)).toEqual({ issues: [], worker: { pid: 1, restarts: 0, crashArmed: false } });
    const kill = await send('POST', '/api/worker/kill', { ...own(), ...json }, '{}');
    expect(kill.status).toBe(200);
    expect(kills).toBe(1);
  });
});
