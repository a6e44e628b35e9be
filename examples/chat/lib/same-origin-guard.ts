/** A request refused by {@link checkSameOrigin}: the status to answer and why. */
export interface Refusal {
  readonly status: 403 | 415;
  readonly message: string;
}

/**
 * The `Host` values under which a server listening on 127.0.0.1:`port` is reached from its own
 * page: `127.0.0.1:<port>` and `localhost:<port>` (without the port when it is 80, as browsers send it).
 */
export function loopbackHosts(port: number): string[] {
  const suffix = port === 80 ? '' : `:${port}`;
  return [`127.0.0.1${suffix}`, `localhost${suffix}`];
}

/**
 * What a local page server must not answer: a request from another site, or through a name that
 * is not its own. Answers a {@link Refusal} (the request must not be handled) when
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
 * GETs), so they must change nothing. `undefined`: the request may be handled.
 */
export function checkSameOrigin(method: string, headers: Headers, hosts: readonly string[]): Refusal | undefined {
  const given = headers.get('host');
  const host = given?.toLowerCase();
  if (host === undefined || !hosts.includes(host)) {
    return {
      status: 403,
      message: `refused: Host ${JSON.stringify(given ?? '')} is not this server; open it as http://${hosts[0] ?? '127.0.0.1'}/`,
    };
  }
  const site = headers.get('sec-fetch-site');
  if (site !== null && site !== 'same-origin' && site !== 'none') {
    return { status: 403, message: `refused: a ${site} request; this server answers its own page only` };
  }
  const own = `http://${host}`;
  const origin = headers.get('origin');
  if (origin !== null && origin.toLowerCase() !== own) {
    return {
      status: 403,
      message: `refused: a request from ${origin}; this server answers its own page (${own}) only`,
    };
  }
  if (method === 'GET' || method === 'HEAD') return undefined;
  if (origin === null) {
    return { status: 403, message: `refused: a ${method} without an Origin header; send it from ${own}/` };
  }
  const type = headers.get('content-type')?.split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/json') {
    return { status: 415, message: `refused: a ${method} body must be application/json, not ${type ?? 'absent'}` };
  }
  return undefined;
}
