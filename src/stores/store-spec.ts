import { InvalidEffectStoreSpecError } from '../errors/errors.js';
import { checkPostgresUrl } from './postgres-url.js';
import { redactSpec as redact } from './spec-redaction.js';

/** What a store spec names: the memory store, an SQLite file, or a PostgreSQL server. */
export type StoreSpec =
  | { readonly kind: 'memory' }
  | { readonly kind: 'sqlite'; readonly path: string }
  | { readonly kind: 'postgres'; readonly url: string };

/** The spec forms {@link parseStoreSpec} accepts, as error messages list them. */
export const ACCEPTED_STORE_SPECS =
  '"memory:", a file path ("./effects.db", "/var/lib/app/effects.db"), an SQLite URL ' +
  '("sqlite:effects.db", "sqlite:///var/lib/app/effects.db", "sqlite::memory:"), or a PostgreSQL URL ' +
  '("postgres://user@host:5432/db", "postgresql://...")';

// A scheme is two or more letters before ':' (one letter would be a Windows drive such as "C:").
const SCHEME = /^([a-z][a-z0-9+.-]+):/i;

/**
 * Reads an effect store spec:
 * - `memory:` — the in-process {@link MemoryEffectStore};
 * - `sqlite:<path>`, `sqlite:///<absolute path>`, `sqlite::memory:` — an SQLite database;
 * - `postgres://…` or `postgresql://…` — a PostgreSQL server (the URL is checked, see
 *   {@link checkPostgresUrl}, then passed to `pg` as is);
 * - anything without a scheme — an SQLite file path.
 *
 * @throws InvalidEffectStoreSpecError naming the problem and the accepted forms; never containing a password.
 */
export function parseStoreSpec(spec: string): StoreSpec {
  if (typeof spec !== 'string' || spec.trim().length === 0) {
    throw invalid(`An effect store spec must be a non-empty string, got ${describe(spec)}.`);
  }
  const scheme = SCHEME.exec(spec)?.[1]?.toLowerCase();
  if (scheme === undefined) {
    // "postgres//host/db" (a missing colon) would otherwise become a local SQLite file per worker,
    // silently unshared: a store spec that looks like a misspelled URL is an error, not a path.
    const misspelled = /^(postgres(?:ql)?|sqlite|memory)(?:\/\/|$)/i.exec(spec)?.[1];
    if (misspelled !== undefined) {
      throw invalid(
        `"${redact(spec)}" looks like a ${misspelled} URL without its ":"; write ${redact(`${misspelled.toLowerCase()}:${spec.slice(misspelled.length)}`)}.`,
      );
    }
    return { kind: 'sqlite', path: spec };
  }
  if (scheme === 'memory') {
    if (spec.length > 'memory:'.length)
      throw invalid(`"${redact(spec)}" has text after "memory:"; write just "memory:".`);
    return { kind: 'memory' };
  }
  if (scheme === 'sqlite') return { kind: 'sqlite', path: sqlitePath(spec) };
  if (scheme === 'postgres' || scheme === 'postgresql')
    return { kind: 'postgres', url: checkPostgresUrl(spec, invalid) };
  throw invalid(`Unknown effect store scheme "${scheme}:" in "${redact(spec)}".`);
}

function sqlitePath(spec: string): string {
  const rest = spec.slice('sqlite:'.length);
  if (rest === ':memory:') return ':memory:';
  // sqlite:///abs/path is the usual URL form of an absolute path; sqlite://host/... has no meaning here.
  if (rest.startsWith('///')) return decoded(spec, rest.slice(2));
  if (rest.startsWith('//')) {
    throw invalid(
      `"${redact(spec)}" names a host; SQLite files are local: write sqlite:///absolute/path or sqlite:relative/path.`,
    );
  }
  const path = decoded(spec, rest);
  if (path.length === 0) throw invalid(`"${spec}" has no file path; write e.g. sqlite:effects.db.`);
  return path;
}

// A path in an sqlite: URL is percent-decoded ("my%20x.db"); a stray "%" is a spec error, not a URIError.
function decoded(spec: string, path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    throw invalid(
      `"${redact(spec)}" has a malformed percent-encoding in its path ("%" must start two hex digits); write a literal "%" as %25.`,
    );
  }
}

function invalid(problem: string): InvalidEffectStoreSpecError {
  return new InvalidEffectStoreSpecError(`${problem} Accepted forms: ${ACCEPTED_STORE_SPECS}.`);
}

function describe(value: unknown): string {
  if (typeof value === 'string') return 'an empty string';
  return value === null ? 'null' : `a value of type ${typeof value}`;
}
