import { InvalidEffectStoreSpecError } from '../errors/errors.js';
import { redactSpec } from './spec-redaction.js';

/** Query parameters of a connection URL that `pg` reads and the store can work with. */
const PG_URL_PARAMS = new Set([
  'host',
  'port',
  'user',
  'password',
  'ssl',
  'sslmode',
  'sslcert',
  'sslkey',
  'sslrootcert',
  'sslnegotiation',
  'uselibpqcompat',
  'application_name',
  'fallback_application_name',
  'options',
  'client_encoding',
  'statement_timeout',
  'lock_timeout',
  'idle_in_transaction_session_timeout',
  'query_timeout',
]);

/** Parameters people write (libpq knows them) that `pg` ignores or that break the store, and what to do instead. */
const PG_URL_PARAM_HINTS: Readonly<Record<string, string>> = {
  dbname: 'pg ignores it; put the database name in the path (postgres://host/database)',
  database: 'pg ignores it; put the database name in the path (postgres://host/database)',
  connect_timeout: 'pg ignores it; pass the pool option connectionTimeoutMillis instead',
  keepalives: 'pg ignores it; pass the pool option keepAlive instead',
  binary: 'the store reads results as text; remove it',
  replication: 'a replication connection cannot run the store; remove it',
};

/** `sslmode` values `pg` understands ("allow" would silently mean "require" there). */
const SSL_MODES = new Set(['disable', 'prefer', 'require', 'verify-ca', 'verify-full', 'no-verify']);

/**
 * Checks a PostgreSQL connection URL (`postgres://` or `postgresql://`) before `pg` sees it, so a
 * typo is one precise error when the store is created instead of a confusing connect failure (or a
 * silently ignored parameter) later: a port that is not a number from 1 to 65535, user info
 * without a host, a `/`, `?` or `#` left unencoded in the password, a malformed percent-encoding,
 * a parameter `pg` does not read, an `sslmode` it does not know. Returns the URL unchanged.
 *
 * No message ever contains the password: the URL is shown through {@link redactSpec}, and parts
 * that might hold it are described, never quoted.
 *
 * @throws InvalidEffectStoreSpecError naming the problem.
 */
export function checkPostgresUrl(spec: string, problem: (message: string) => Error = plain): string {
  const scheme = /^(postgres(?:ql)?):/i.exec(spec)?.[1];
  if (scheme === undefined) {
    const missing = /^postgres(?:ql)?\/\//i.test(spec) ? ' (it looks like a postgres URL without its ":")' : '';
    throw problem(
      `"${redactSpec(spec)}" is not a PostgreSQL URL${missing}; write it as postgres://user@host:5432/database.`,
    );
  }
  const shown = `"${redactSpec(spec)}"`;
  if (!spec.slice(scheme.length + 1).startsWith('//')) {
    throw problem(`${shown} is not a PostgreSQL URL; write it as ${scheme.toLowerCase()}://user@host:5432/database.`);
  }
  let url: URL;
  try {
    url = new URL(spec);
  } catch {
    throw problem(`${shown} is not a valid URL: ${whyNotAUrl(spec.slice(scheme.length + 3))}.`);
  }
  if (url.port === '0') throw problem(`${shown} has port 0; use a port from 1 to 65535.`);
  for (const [part, text] of [
    ['user name', url.username],
    ['password', url.password],
    ['host', url.hostname],
    ['database name', url.pathname.slice(1)],
  ] as const) {
    if (!wellEncoded(text)) {
      throw problem(
        `${shown} has a malformed percent-encoding in its ${part} ("%" must start two hex digits); write a literal "%" as %25.`,
      );
    }
  }
  for (const [name, value] of url.searchParams) {
    const shownName = JSON.stringify(name.slice(0, 40));
    const hint = PG_URL_PARAM_HINTS[name.toLowerCase()];
    if (hint !== undefined) throw problem(`${shown} has the parameter ${shownName}: ${hint}.`);
    if (!PG_URL_PARAMS.has(name)) {
      throw problem(
        `${shown} has the parameter ${shownName}, which pg does not read (a typo?). Known parameters: ${[...PG_URL_PARAMS].join(', ')}.`,
      );
    }
    if (name === 'sslmode' && !SSL_MODES.has(value)) {
      throw problem(
        `${shown} has sslmode ${JSON.stringify(value.slice(0, 40))}; use one of ${[...SSL_MODES].join(', ')}.`,
      );
    }
  }
  return spec;
}

function plain(message: string): Error {
  return new InvalidEffectStoreSpecError(message);
}

function wellEncoded(text: string): boolean {
  try {
    decodeURIComponent(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * Why the part after `scheme://` is not a URL, in words that never quote the user info (it holds
 * the password). The user info ends at the last `@`: a password may hold a stray `@`, but then
 * what follows is still the host.
 */
function whyNotAUrl(rest: string): string {
  const at = rest.lastIndexOf('@');
  const userinfo = at < 0 ? '' : rest.slice(0, at);
  const hostPort = rest.slice(at + 1).split(/[/?#]/, 1)[0] ?? '';
  if (/[/?#]/.test(userinfo)) {
    return 'the user name or password holds a "/", "?" or "#", which must be percent-encoded (%2F, %3F, %23)';
  }
  if (hostPort.startsWith('[') && !hostPort.includes(']')) return 'the IPv6 host has no closing "]"';
  const match = /^(\[[^\]]*\]|[^:]*)(?::(.*))?$/.exec(hostPort);
  const host = match?.[1] ?? '';
  const port = match?.[2];
  if (host === '') {
    return at >= 0
      ? 'it has a user but no host; write postgres://user:password@host:5432/database'
      : 'it has no host; write postgres://host:5432/database';
  }
  if (port !== undefined && port !== '') {
    if (!/^\d+$/.test(port)) return 'the port is not a number (use 1 to 65535)';
    if (Number(port) < 1 || Number(port) > 65535) return `the port ${port} is not from 1 to 65535`;
  }
  if (/[\s<>"{}|\\^`]/.test(host))
    return `the host ${JSON.stringify(host.slice(0, 80))} holds characters a host name cannot`;
  return 'check its user, host, port and database parts';
}
