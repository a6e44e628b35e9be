// The few shapes of `pg` the PostgreSQL run stream uses (declared here: `pg` is an optional peer,
// and nothing public needs `@types/pg`), and its loader.
import { MissingPeerDependencyError } from '../errors/errors.js';
import type { PgPoolConfig } from '../stores/postgres-types.js';

interface PgResult {
  readonly rows: unknown[];
  readonly rowCount: number | null;
}
interface PgQuery {
  query(config: { text: string; values?: unknown[]; query_timeout?: number }): Promise<PgResult>;
}
export interface PgPoolLike extends PgQuery {
  end(): Promise<void>;
  on(event: 'error', listener: (error: Error) => void): unknown;
}
export interface PgClientLike extends PgQuery {
  connect(): Promise<void>;
  end(): Promise<void>;
  on(event: 'notification', listener: (message: { channel: string; payload?: string }) => void): unknown;
  on(event: 'error' | 'end', listener: (error?: Error) => void): unknown;
}
interface PgModule {
  readonly Pool: new (config: PgPoolConfig) => PgPoolLike;
  readonly Client: new (config: PgPoolConfig) => PgClientLike;
}

let loaded: Promise<PgModule> | undefined;

/**
 * Loads `pg` on first use, once per process.
 *
 * @throws MissingPeerDependencyError naming `npm install pg` when it is not installed.
 */
export function loadPg(): Promise<PgModule> {
  loaded ??= import('pg').then(
    // pg is CommonJS: its exports arrive as the default export.
    (module) => module.default as unknown as PgModule,
    (error: unknown) => {
      loaded = undefined; // installed meanwhile? the next call tries again
      throw new MissingPeerDependencyError({ packageName: 'pg', feature: 'The PostgreSQL run stream', cause: error });
    },
  );
  return loaded;
}
