import * as temporalCommon from '@temporalio/common';
import type { DataConverter, Payload } from '@temporalio/common';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { OffloadedPayloadCorruptError, OffloadedPayloadMissingError } from '../src/errors/errors.js';
import type { ConversationStore } from '../src/stores/conversation-store.js';
import { toFailure } from '../common/to-failure.js';
import { describeStore } from './effect-store-check.js';

/**
 * Default size from which a payload goes to External Storage: 32 KiB. Below Temporal's own default
 * (256 KiB) on purpose: with the conversation out of the history, what is left per step is small,
 * and a tool result of 200 KB in every step would otherwise still grow the history by 400 KB a
 * step (the result, then the next model step's input).
 */
export const DEFAULT_OFFLOAD_THRESHOLD_BYTES = 32 * 1024;

/** What the chamvi External Storage takes. @beta @experimental */
export interface ChamviExternalStorageOptions {
  /** Payloads of at least this many bytes are offloaded. Default {@link DEFAULT_OFFLOAD_THRESHOLD_BYTES}. */
  readonly thresholdBytes?: number;
}

const MAGIC = 'chv1';

/** A payload as bytes: a JSON header (magic, metadata in base64, data length), then the data. */
function encodePayload(payload: Payload): Uint8Array {
  const metadata: Record<string, string> = {};
  for (const [name, value] of Object.entries(payload.metadata ?? {})) {
    if (value != null) metadata[name] = Buffer.from(value).toString('base64');
  }
  const header = Buffer.from(JSON.stringify({ v: MAGIC, metadata }));
  const data = payload.data ?? new Uint8Array();
  const out = Buffer.allocUnsafe(4 + header.length + data.length);
  out.writeUInt32BE(header.length, 0);
  header.copy(out, 4);
  Buffer.from(data.buffer, data.byteOffset, data.byteLength).copy(out, 4 + header.length);
  return out;
}

/** The key a payload's bytes are stored under: their SHA-256, base64url. */
function contentKey(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('base64url');
}

/** The payload {@link encodePayload} wrote; throws a plain error naming what is wrong otherwise. */
function decodePayload(bytes: Uint8Array): Payload {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buffer.length < 4) throw new RangeError(`${buffer.length} bytes, shorter than the 4-byte header length`);
  const headerLength = buffer.readUInt32BE(0);
  if (4 + headerLength > buffer.length) {
    throw new RangeError(`a header of ${headerLength} bytes announced, ${buffer.length - 4} bytes stored`);
  }
  const header = JSON.parse(buffer.subarray(4, 4 + headerLength).toString()) as unknown;
  const { v, metadata: encoded } = (header ?? {}) as { v?: unknown; metadata?: unknown };
  if (v !== MAGIC) throw new TypeError(`unknown payload format ${JSON.stringify(v)}`);
  if (typeof encoded !== 'object' || encoded === null) throw new TypeError('a header without metadata');
  const metadata: Record<string, Uint8Array> = {};
  for (const [name, value] of Object.entries(encoded)) {
    if (typeof value !== 'string') throw new TypeError(`metadata ${JSON.stringify(name)} is not a base64 string`);
    metadata[name] = Buffer.from(value, 'base64');
  }
  return { metadata, data: Uint8Array.from(buffer.subarray(4 + headerLength)) };
}

/**
 * The payload stored under `key`, if `bytes` are what was stored there: they must hash to the key
 * and decode. Otherwise a non-retryable ApplicationFailure of type `OffloadedPayloadCorruptError`
 * (the error itself as its cause): the driver runs before an activity does, where Temporal makes
 * any other error retryable, and a retry would read the same bytes.
 */
function readBack(key: string, bytes: Uint8Array, store: string): Payload {
  const actual = contentKey(bytes);
  if (actual !== key) {
    throw corrupt(
      new OffloadedPayloadCorruptError({
        key,
        store,
        problem: `does not match its content hash (its ${bytes.byteLength} bytes hash to ${actual})`,
      }),
    );
  }
  try {
    return decodePayload(bytes);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw corrupt(
      new OffloadedPayloadCorruptError({
        key,
        store,
        problem: `is not a payload the chamvi driver wrote (${reason})`,
        cause: error,
      }),
    );
  }
}

function corrupt(error: OffloadedPayloadCorruptError): temporalCommon.ApplicationFailure {
  return toFailure(error, { cause: error });
}

/**
 * `@temporalio/common`'s `ExternalStorage`, read off the installed SDK's `DataConverter` so these
 * declarations compile on SDKs before 1.24 too (there it is `{}`, and External Storage is off).
 */
export type TemporalExternalStorage = NonNullable<
  DataConverter extends { externalStorage?: infer Storage } ? Storage : never
>;

/**
 * `@temporalio/common`'s `StorageDriver` (1.24+), read off {@link TemporalExternalStorage}; on
 * SDKs before 1.24, which have none, the shape the chamvi driver has.
 */
export type TemporalStorageDriver = TemporalExternalStorage extends { readonly drivers: ReadonlyArray<infer Driver> }
  ? Driver
  : {
      readonly name: string;
      readonly type: string;
      store(context: unknown, payloads: Payload[]): Promise<Array<{ readonly claimData: Record<string, string> }>>;
      retrieve(context: unknown, claims: Array<{ readonly claimData: Record<string, string> }>): Promise<Payload[]>;
    };

let probed: string | undefined | null = null;

/**
 * Why External Storage cannot be used in this install, or `undefined` when it can: the installed
 * `@temporalio/common` must have it (public preview since 1.24), and must be able to encode its
 * reference payloads. In 1.24.0 that fails ("type must be a Type") when npm installs two copies of
 * protobufjs 8 (one under `@temporalio/common`, one under `@temporalio/proto`), which it does when
 * the protobufjs 7 of `@grpc/proto-loader` takes the top of `node_modules`: adding `protobufjs@^8`
 * to the app's own dependencies makes npm install one.
 * @beta @experimental
 */
export function externalStorageProblem(): string | undefined {
  if (probed !== null) return probed;
  if (typeof (temporalCommon as { ExternalStorage?: unknown }).ExternalStorage !== 'function') {
    return (probed = 'the installed @temporalio/common has no External Storage (it came with 1.24)');
  }
  try {
    const load = createRequire(import.meta.url);
    const helpers = load('@temporalio/common/lib/internal-non-workflow/extstore-helpers') as {
      encodeReferencePayload(reference: { driverName: string; claim: unknown; sizeBytes: number }): Payload;
      decodeReferencePayload(payload: Payload): unknown;
    };
    const claim = new temporalCommon.StorageDriverClaim({ key: 'probe' });
    helpers.decodeReferencePayload(helpers.encodeReferencePayload({ driverName: 'probe', claim, sizeBytes: 1 }));
    return (probed = undefined);
  } catch (error) {
    // A layout this probe does not know (a later SDK): nothing to tell, External Storage is used.
    const code = (error as { code?: unknown }).code;
    if (code === 'MODULE_NOT_FOUND' || code === 'ERR_PACKAGE_PATH_NOT_EXPORTED') return (probed = undefined);
    const reason = error instanceof Error ? error.message : String(error);
    return (probed = `@temporalio/common cannot encode External Storage references in this install (${reason}): there are two copies of protobufjs 8 in node_modules; add protobufjs@^8 to your app's dependencies so that npm installs one`);
  }
}

/** Whether External Storage can be used in this install (see {@link externalStorageProblem}). */
export function externalStorageAvailable(): boolean {
  return externalStorageProblem() === undefined;
}

/**
 * A Temporal External Storage driver that keeps offloaded payloads in a chamvi store (the SQLite
 * file or PostgreSQL database the workers already share), content-addressed: the same payload
 * stored twice is one row. Payloads follow the store's retention from when they were last stored;
 * keep it longer than your workflows run plus the namespace's history retention.
 *
 * Every payload read back is checked against its key (the SHA-256 of its bytes) and decoded before
 * it is handed to Temporal: a row that was edited, truncated or replaced, or is not one this driver
 * wrote, fails the read with `OffloadedPayloadCorruptError` (a non-retryable ApplicationFailure of
 * that type, the error as its cause) naming the key and the store; a missing row fails with
 * `OffloadedPayloadMissingError`.
 */
export function storeStorageDriver(store: ConversationStore): TemporalStorageDriver {
  const { StorageDriverClaim } = temporalCommon as unknown as {
    StorageDriverClaim: new (data: Record<string, string>) => temporalCommon.StorageDriverClaim;
  };
  const where = describeStore(store);
  return {
    name: 'chamvi-store',
    type: 'chamvi.store',
    async store(_context, payloads) {
      return Promise.all(
        payloads.map(async (payload) => {
          const bytes = encodePayload(payload);
          const key = contentKey(bytes);
          await store.putPayload(key, bytes);
          return new StorageDriverClaim({ key });
        }),
      );
    },
    async retrieve(_context, claims) {
      return Promise.all(
        claims.map(async (claim) => {
          const key = claim.claimData['key'] ?? '';
          const bytes = await store.getPayload(key);
          if (bytes === undefined) throw new OffloadedPayloadMissingError(key);
          return readBack(key, bytes, where);
        }),
      );
    },
  };
}

/**
 * Temporal External Storage on the chamvi store, for a data converter's `externalStorage`, or
 * `undefined` when this install cannot use it (see {@link externalStorageProblem}: payloads then
 * stay inline, and an effect result over 2 MiB fails with `EffectResultTooLargeError`).
 */
export function chamviExternalStorage(
  store: ConversationStore,
  options: ChamviExternalStorageOptions = {},
): TemporalExternalStorage | undefined {
  if (!externalStorageAvailable()) return undefined;
  const threshold = options.thresholdBytes ?? DEFAULT_OFFLOAD_THRESHOLD_BYTES;
  return new temporalCommon.ExternalStorage({ drivers: [storeStorageDriver(store)], payloadSizeThreshold: threshold });
}

/**
 * A data converter with the chamvi External Storage, for clients that read agent runs whose
 * payloads may be offloaded (a large prompt, a large final text): `new Client({ connection,
 * dataConverter: chamviDataConverter(store) })`. The worker's plugin configures its own.
 * @beta @experimental
 */
export function chamviDataConverter(
  store: ConversationStore,
  options: ChamviExternalStorageOptions & { readonly base?: DataConverter } = {},
): DataConverter {
  const externalStorage = chamviExternalStorage(store, options);
  return { ...(options.base ?? {}), ...(externalStorage === undefined ? {} : { externalStorage }) };
}
