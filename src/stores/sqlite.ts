// `@chamvi/temporal/stores/sqlite`: the embedded effect store, one file shared by the workers of
// one machine. `node:sqlite` is loaded when the first file opens.
export { SqliteEffectStore, type SqliteEffectStoreOptions } from './sqlite-effect-store.js';
