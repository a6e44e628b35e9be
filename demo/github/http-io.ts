import type { IncomingMessage, ServerResponse } from 'node:http';

/** An HTTP error a route throws; the server answers it as GitHub does: `{ message, documentation_url }`. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Reads a request body as JSON (`undefined` when empty). Throws a 400 {@link HttpError} on invalid JSON. */
export async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new HttpError(400, 'Problems parsing JSON');
  }
}

/** Sends `body` as JSON with `status` and extra headers. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = body === undefined ? '' : JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/** Destroys the connection without answering: the client sees a network error after the server acted. */
export function dropResponse(req: IncomingMessage, res: ServerResponse): void {
  res.destroy();
  req.socket.destroy();
}
