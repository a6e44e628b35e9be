import type { IncomingMessage } from 'node:http';
import { HttpError } from '../../demo/github/http-io.js';

/**
 * The `Host` values under which a server listening on 127.0.0.1:`port` is reached from its own
 * page: `127.0.0.1:<port>` and `localhost:<port>` (without the port when it is 80, as browsers send it).
 */
export function loopbackHosts(port: number): string[] {
  const suffix = port === 80 ? '' : `:${port}`;
  return [`127.0.0.1${suffix}`, `localhost${suffix}`];
}

/**
 * Refuses what a local page server must not answer: a request from another site, or through a
 * name that is not its own. Throws an {@link HttpError} (the request is not handled) when
 * - `Host` is not one of `hosts` (403): a DNS-rebound name reaches 127.0.0.1 with its own `Host`;
 * - `Sec-Fetch-Site` says the browser sent it from another origin (403), for GETs as well;
 * - `Origin` is present and is not `http://<Host>` (403);
 * - a method other than GET and HEAD comes without `Origin` (403): every browser sends it there,
 *   so only a client that is not this server's page omits it;
 * - a method other than GET and HEAD has a body type other than `application/json` (415): a
 *   cross-site page can send `text/plain` or a form without asking first, JSON only after a
 *   CORS preflight, which this server never grants.
 *
 * GET and HEAD are otherwise let through without `Origin` (a browser omits it on same-origin
 * GETs), so they must change nothing.
 */
export function checkSameOrigin(req: IncomingMessage, hosts: readonly string[]): void {
  const host = req.headers.host?.toLowerCase();
  if (host === undefined || !hosts.includes(host)) {
    throw new HttpError(
      403,
      `refused: Host ${JSON.stringify(req.headers.host ?? '')} is not this server; open it as http://${hosts[0] ?? '127.0.0.1'}/`,
    );
  }
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') {
    throw new HttpError(403, `refused: a ${site} request; this server answers its own page only`);
  }
  const own = `http://${host}`;
  const origin = req.headers.origin;
  if (origin !== undefined && origin.toLowerCase() !== own) {
    throw new HttpError(403, `refused: a request from ${origin}; this server answers its own page (${own}) only`);
  }
  const method = req.method ?? 'GET';
  if (method === 'GET' || method === 'HEAD') return;
  if (origin === undefined) {
    throw new HttpError(403, `refused: a ${method} without an Origin header; send it from ${own}/`);
  }
  const type = req.headers['content-type']?.split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/json') {
    throw new HttpError(415, `refused: a ${method} body must be application/json, not ${type ?? 'absent'}`);
  }
}
