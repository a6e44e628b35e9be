import { UnsupportedJsonValueError } from '../errors/errors.js';

/** Settings of {@link canonicalJson}. */
export interface CanonicalJsonOptions {
  /**
   * `true` (the default): a value JSON cannot represent faithfully throws an
   * {@link UnsupportedJsonValueError} instead of being written the lossy way `JSON.stringify`
   * writes it. `false`: written as `JSON.stringify` writes it (`NaN` as `null`, a `Map` as `{}`,
   * functions dropped), only BigInt and cycles throw. Keys and fingerprints always use `true`;
   * `false` is for explaining why `JSON.stringify` failed on a value.
   */
  readonly faithful?: boolean;
}

/**
 * Serialises `value` as canonical JSON: object keys sorted (by UTF-16 code unit) at every depth,
 * `undefined` object properties dropped, and `toJSON` honoured (so a `Date` becomes its ISO
 * string). Equal inputs give equal strings whatever their key order, and (by default) different
 * inputs never give the same string, which makes the result fit for hashing into effect keys.
 *
 * So that two different inputs never share a default effect key, a value that JSON would write
 * lossily throws (naming its path) instead of being written: `NaN`, `Infinity` and `-Infinity`
 * (JSON writes `null`), `Map`, `Set`, `WeakMap`, `RegExp`, typed arrays, `ArrayBuffer`, `DataView`,
 * an invalid `Date` and any other object whose prototype is not `Object.prototype` or `null` and
 * that has no `toJSON` (JSON writes `{}` or only its own fields, losing what it was), functions and
 * symbols as property values (JSON drops them) and enumerable symbol-keyed properties (JSON ignores
 * them), `undefined`, functions and symbols as array elements or array holes (JSON writes `null`,
 * so `[undefined]` would equal `[null]`), and `undefined` as the whole value (JSON writes nothing).
 * `null` is a JSON value and is written as `null`. `-0` is written `0`, as JSON writes it: the two
 * compare equal, and a model that writes `-0` means the number zero.
 *
 * @throws UnsupportedJsonValueError (a `TypeError`) for BigInt, a cycle, or (unless
 *   `faithful: false`) a value listed above, naming the path (`$.a[1].n`) and the fix.
 */
export function canonicalJson(value: unknown, options: CanonicalJsonOptions = {}): string {
  const trail: Trail = { objects: [], keys: [], faithful: options.faithful !== false };
  return write(value, '', trail, 'root') ?? 'null';
}

/**
 * The objects and keys from the root to the value being written: the objects detect cycles (a
 * shared reference met again outside its own subtree is not one), the keys name the path in an
 * error. Kept as stacks, so a path string is only built when there is an error to report.
 */
interface Trail {
  readonly objects: object[];
  readonly keys: (string | number)[];
  readonly faithful: boolean;
}

/** Where a value sits: what JSON does with a lossy value depends on it (drop, or write `null`). */
type Slot = 'root' | 'property' | 'element';

function pathOf(trail: Trail): string {
  return `$${trail.keys.map((k) => (typeof k === 'number' ? `[${k}]` : `.${k}`)).join('')}`;
}

const AS_NULL = 'JSON.stringify would write it as null, so it would share a default effect key with null';
const DROPPED = 'JSON.stringify would drop it, so inputs with and without it would share a default effect key';
const AS_FIELDS =
  'JSON.stringify would write it as {} or as its own fields only, so it would share a default effect key with that plain object';

function unfaithful(what: string, consequence: string, trail: Trail, convert: string): never {
  const path = pathOf(trail);
  throw new UnsupportedJsonValueError({
    path,
    valueKind: what,
    message: `canonicalJson: ${what} at ${path} has no faithful JSON form (${consequence}). Convert it before calling the tool (${convert}), or give the tool an effectKey that does not hash this value.`,
  });
}

/** Values JSON drops from an object, writes as `null` in an array, and writes nothing for at the root. */
function droppedValue(current: unknown, slot: Slot, trail: Trail): undefined {
  if (!trail.faithful || (current === undefined && slot === 'property')) return undefined;
  const what = current === undefined ? 'undefined' : `a ${typeof current}`;
  if (slot === 'element') return unfaithful(`${what} array element`, AS_NULL, trail, 'use null, or leave it out');
  if (slot === 'root')
    return unfaithful(what, 'JSON.stringify writes nothing for it', trail, 'pass null or {} for "no input"');
  return unfaithful(what, DROPPED, trail, 'leave the property out, or pass a string');
}

function write(value: unknown, key: string | number, trail: Trail, slot: Slot): string | undefined {
  let current = value;
  if (
    typeof current === 'object' &&
    current !== null &&
    typeof (current as { toJSON?: unknown }).toJSON === 'function'
  ) {
    // Date.prototype.toJSON writes an invalid date as null, which would equal an input of null.
    if (trail.faithful && isTagged(current, 'Date') && Number.isNaN((current as Date).getTime())) {
      unfaithful('an invalid Date', AS_NULL, trail, 'pass a valid date, or null');
    }
    current = (current as { toJSON: (key: string) => unknown }).toJSON(String(key));
  }
  // Boxed primitives are written as their primitive value, as JSON.stringify does.
  if (current instanceof Number || current instanceof String || current instanceof Boolean) current = current.valueOf();
  switch (typeof current) {
    case 'string':
      return JSON.stringify(current);
    case 'number':
      if (Number.isFinite(current)) return JSON.stringify(current);
      if (trail.faithful) unfaithful(String(current), AS_NULL, trail, 'a string such as "NaN", or null for no value');
      return 'null';
    case 'boolean':
      return current ? 'true' : 'false';
    case 'bigint':
      throw new UnsupportedJsonValueError({
        path: pathOf(trail),
        valueKind: 'BigInt',
        message: `canonicalJson: BigInt at ${pathOf(trail)} cannot be serialised. Convert it to a string or number before calling the tool, or give the tool an effectKey that does not hash this value.`,
      });
    case 'undefined':
    case 'function':
    case 'symbol':
      return droppedValue(current, slot, trail);
  }
  if (current === null) return 'null';
  const obj = current as object;
  if (trail.objects.includes(obj)) {
    throw new UnsupportedJsonValueError({
      path: pathOf(trail),
      valueKind: 'cyclic structure',
      message: `canonicalJson: cyclic structure at ${pathOf(trail)} cannot be serialised. Pass a tree, not a graph with back-references.`,
    });
  }
  const isArray = Array.isArray(obj);
  if (trail.faithful && !isArray) checkPlainObject(obj, trail);
  // No try/finally: a throw abandons the whole trail, which belongs to this one canonicalJson call.
  trail.objects.push(obj);
  let out: string;
  if (isArray) {
    // A plain loop, not map(): map skips holes of sparse arrays, which would write `[1,,2]`.
    let parts = '';
    for (let i = 0; i < obj.length; i++) {
      trail.keys.push(i);
      const written = write((obj as unknown[])[i], i, trail, 'element') ?? 'null';
      trail.keys.pop();
      parts = i === 0 ? written : `${parts},${written}`;
    }
    out = `[${parts}]`;
  } else {
    const record = obj as Record<string, unknown>;
    let parts = '';
    for (const k of Object.keys(record).sort()) {
      trail.keys.push(k);
      const written = write(record[k], k, trail, 'property');
      trail.keys.pop();
      if (written !== undefined)
        parts = parts === '' ? `${JSON.stringify(k)}:${written}` : `${parts},${JSON.stringify(k)}:${written}`;
    }
    out = `{${parts}}`;
  }
  trail.objects.pop();
  return out;
}

/**
 * Rejects what JSON would write as a plain object although it is not one (a `Map` becomes `{}`, a
 * class instance its own fields), and plain objects with enumerable symbol keys (JSON ignores them).
 */
function checkPlainObject(obj: object, trail: Trail): void {
  const proto: unknown = Object.getPrototypeOf(obj);
  // A prototype whose own prototype is null is some realm's Object.prototype: plain objects made in
  // a vm context or a jest sandbox are as plain as ours.
  if (proto !== Object.prototype && proto !== null && Object.getPrototypeOf(proto) !== null) {
    const tag = Object.prototype.toString.call(obj).slice(8, -1);
    const name = (proto as { constructor?: { name?: unknown } }).constructor?.name;
    const what =
      tag !== 'Object' ? `a ${tag}` : typeof name === 'string' && name !== '' ? `a ${name} instance` : 'an object';
    unfaithful(what, AS_FIELDS, trail, hintFor(tag));
  }
  for (const symbol of Object.getOwnPropertySymbols(obj)) {
    if (Object.prototype.propertyIsEnumerable.call(obj, symbol)) {
      unfaithful(
        `the symbol-keyed property ${String(symbol)}`,
        DROPPED,
        trail,
        'use a string key, or leave the property out',
      );
    }
  }
}

function hintFor(tag: string): string {
  switch (tag) {
    case 'Map':
      return 'Object.fromEntries(map) or [...map]';
    case 'Set':
      return '[...set]';
    case 'RegExp':
      return 'its source string (regexp.source)';
    case 'ArrayBuffer':
    case 'SharedArrayBuffer':
    case 'DataView':
      return 'an array of its bytes, or a base64 string';
    case 'Error':
      return '{ message: error.message }';
    default:
      return isTypedArray(tag)
        ? 'Array.from(value), or a base64 string'
        : 'a plain object with the fields that matter, or give its class a toJSON';
  }
}

function isTypedArray(tag: string): boolean {
  return /^(Big)?(Ui|I)nt(8|16|32|64)(Clamped)?Array$|^Float(16|32|64)Array$/.test(tag);
}

/** Realm-safe type check by the object's built-in tag (`instanceof` fails across realms). */
function isTagged(value: object, tag: string): boolean {
  return Object.prototype.toString.call(value) === `[object ${tag}]`;
}
