import { InvalidEffectStoreSpecError } from '../errors/errors.js';

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
 * - `postgres://…` or `postgresql://…` — a PostgreSQL server (the URL is passed to `pg` as is);
 * - anything without a scheme — an SQLite file path.
 *
 * @throws InvalidEffectStoreSpecError naming the problem and the accepted forms.
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
        `"${redact(spec)}" looks like a ${misspelled} URL without its ":"; write ${misspelled.toLowerCase()}:${spec.slice(misspelled.length)}.`,
      );
    }
    return { kind: 'sqlite', path: spec };
  }
  if (scheme === 'memory') {
    if (spec.length > 'memory:'.length) throw invalid(`"${spec}" has text after "memory:"; write just "memory:".`);
    return { kind: 'memory' };
  }
  if (scheme === 'sqlite') return { kind: 'sqlite', path: sqlitePath(spec) };
  if (scheme === 'postgres' || scheme === 'postgresql') {
    if (!spec.slice(scheme.length + 1).startsWith('//')) {
      throw invalid(`"${spec}" is not a PostgreSQL URL; write it as ${scheme}://user@host:5432/database.`);
    }
    try {
      new URL(spec);
    } catch {
      throw invalid(`"${redact(spec)}" is not a valid URL.`);
    }
    return { kind: 'postgres', url: spec };
  }
  throw invalid(`Unknown effect store scheme "${scheme}:" in "${redact(spec)}".`);
}

function sqlitePath(spec: string): string {
  const rest = spec.slice('sqlite:'.length);
  if (rest === ':memory:') return ':memory:';
  // sqlite:///abs/path is the usual URL form of an absolute path; sqlite://host/... has no meaning here.
  if (rest.startsWith('///')) return decodeURIComponent(rest.slice(2));
  if (rest.startsWith('//')) {
    throw invalid(
      `"${spec}" names a host; SQLite files are local: write sqlite:///absolute/path or sqlite:relative/path.`,
    );
  }
  const path = decodeURIComponent(rest);
  if (path.length === 0) throw invalid(`"${spec}" has no file path; write e.g. sqlite:effects.db.`);
  return path;
}

function invalid(problem: string): InvalidEffectStoreSpecError {
  return new InvalidEffectStoreSpecError(`${problem} Accepted forms: ${ACCEPTED_STORE_SPECS}.`);
}

function describe(value: unknown): string {
  if (typeof value === 'string') return 'an empty string';
  return value === null ? 'null' : `a value of type ${typeof value}`;
}

// Error messages must not leak a password from a connection URL.
function redact(spec: string): string {
  return spec.replace(/\/\/([^:/@]+):[^@/]*@/, '//$1:***@');
}
