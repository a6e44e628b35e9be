import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The listening part of the local test servers (GitHub subset, idempotent HTTP API): starts on a
 * port (0 picks a free one), stops closing open connections, and tells its base URL.
 */
export class LocalHttpServer {
  private server: Server | undefined;

  constructor(
    private readonly name: string,
    private readonly handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
    private readonly host = '127.0.0.1',
    private readonly port = 0,
  ) {}

  /** Starts listening; resolves once the port is bound. Safe to call twice. */
  async start(): Promise<void> {
    if (this.server !== undefined) return;
    const server = createServer((req, res) => void this.handle(req, res));
    // fetch (undici) reuses a connection only when the server promises to keep it open longer than
    // 2 s (its keep-alive threshold): with 1 s every request opened a new one. GitHub keeps them longer.
    server.keepAliveTimeout = 5_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, this.host, () => resolve());
    });
    this.server = server;
  }

  /** Stops listening and closes open connections. Safe to call twice. */
  async stop(): Promise<void> {
    const server = this.server;
    if (server === undefined) return;
    this.server = undefined;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Base URL, e.g. `http://127.0.0.1:41234`. Throws before `start()`. */
  get url(): string {
    const address = this.server?.address() as AddressInfo | null | undefined;
    if (!address) throw new Error(`${this.name}: call start() before reading url.`);
    return `http://${this.host}:${address.port}`;
  }
}
