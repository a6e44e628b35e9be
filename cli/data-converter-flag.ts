import type { DataConverter } from '@temporalio/common';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { UsageError } from './usage-error.js';

/** The `--data-converter <module>` flag every command that talks to Temporal accepts. */
export const DATA_CONVERTER_OPTION = { 'data-converter': { type: 'string' } } as const;

/** The environment variable naming the module when the flag is not given. */
export const DATA_CONVERTER_ENV = 'CHAMVI_DATA_CONVERTER';

/**
 * The data converter a `--data-converter` module exports: a named export `dataConverter`, else the
 * default export, each a Temporal `DataConverter` (`{ payloadCodecs: [...] }`; a custom payload
 * converter goes in `payloadConverterPath`). The workers must use the same one: payloads they
 * encoded (an encryption codec, say) cannot be read without it. `undefined` without the flag and
 * the env var.
 */
export async function loadDataConverter(command: string, flag: string | undefined): Promise<DataConverter | undefined> {
  const specifier = flag !== undefined && flag !== '' ? flag : process.env[DATA_CONVERTER_ENV];
  if (specifier === undefined || specifier === '') return undefined;
  const path = resolve(specifier);
  const target = existsSync(path) ? pathToFileURL(path).href : specifier;
  let module: Record<string, unknown>;
  try {
    module = (await import(target)) as Record<string, unknown>;
  } catch (error) {
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new UsageError(`${command}: cannot load the data converter module "${specifier}" (${reason})`);
  }
  const candidate = module['dataConverter'] ?? module['default'];
  if (typeof candidate !== 'object' || candidate === null) {
    throw new UsageError(
      `${command}: "${specifier}" exports no data converter; export const dataConverter = { payloadCodecs: [...] }`,
    );
  }
  return candidate;
}

/**
 * A payload the CLI could not decode (an encoding only the workers' codec knows) as a
 * {@link UsageError} that says to pass that codec; `undefined` for any other error.
 */
export function undecodablePayload(error: unknown): UsageError | undefined {
  for (let at: unknown = error; at instanceof Error; at = at.cause) {
    const encoding = /Unknown encoding: ?(\S+)/i.exec(at.message)?.[1];
    if (encoding !== undefined) {
      return new UsageError(
        `cannot decode a payload with encoding ${encoding}: the workers use a payload codec; pass their data converter with --data-converter <module> (or ${DATA_CONVERTER_ENV})`,
      );
    }
  }
  return undefined;
}
