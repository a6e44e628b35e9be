/**
 * A store spec or connection URL as error messages may show it: every password hidden.
 *
 * Hides the password of the user info (everything between the first `:` after the user name and
 * the last `@`, so a password holding an unencoded `/`, `@`, `?` or `#` is hidden whole), a
 * `password=` query parameter, and a non-numeric "port" of a URL without user info (which is
 * where a password lands when the `@host` part was forgotten: `postgres://user:secret/db`).
 * Over-hiding is harmless; a leaked password is not.
 */
export function redactSpec(spec: string): string {
  const scheme = /^[a-z][a-z0-9+.-]*:(?:\/\/)?/i.exec(spec)?.[0] ?? '';
  let rest = spec.slice(scheme.length).replace(/([?&;]password=)[^&#]*/gi, '$1***');
  const at = rest.lastIndexOf('@');
  if (at >= 0) {
    const userinfo = rest.slice(0, at);
    const colon = userinfo.indexOf(':');
    if (colon >= 0) rest = `${userinfo.slice(0, colon)}:***${rest.slice(at)}`;
  } else {
    rest = rest.replace(/^([^/?#:]*):([^/?#]*)/, (whole, host: string, port: string) =>
      /^\d*$/.test(port) ? whole : `${host}:***`,
    );
  }
  return scheme + rest;
}
