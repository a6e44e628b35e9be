/**
 * Serialises `value` as canonical JSON: object keys sorted (by UTF-16 code unit) at every depth,
 * `undefined`, function and symbol properties dropped, `undefined` array elements written as
 * `null` (as `JSON.stringify` does), and `toJSON` honoured (so a `Date` becomes its ISO string).
 *
 * Equal inputs give equal strings whatever their key order, which makes the result fit for hashing
 * into effect keys.
 *
 * @throws TypeError for a BigInt or a cyclic structure, naming where it was found.
 */
export function canonicalJson(value: unknown): string {
  return write(value, '', { objects: [], keys: [] }) ?? 'null';
}

/**
 * The objects and keys from the root to the value being written: the objects detect cycles (a
 * shared reference met again outside its own subtree is not one), the keys name the path in an
 * error. Kept as stacks, so a path string is only built when there is an error to report.
 */
interface Trail {
  readonly objects: object[];
  readonly keys: (string | number)[];
}

function pathOf(trail: Trail): string {
  return `$${trail.keys.map((k) => (typeof k === 'number' ? `[${k}]` : `.${k}`)).join('')}`;
}

function write(value: unknown, key: string | number, trail: Trail): string | undefined {
  let current = value;
  if (
    typeof current === 'object' &&
    current !== null &&
    typeof (current as { toJSON?: unknown }).toJSON === 'function'
  ) {
    current = (current as { toJSON: (key: string) => unknown }).toJSON(String(key));
  }
  // Boxed primitives are written as their primitive value, as JSON.stringify does.
  if (current instanceof Number || current instanceof String || current instanceof Boolean) current = current.valueOf();
  switch (typeof current) {
    case 'string':
      return JSON.stringify(current);
    case 'number':
      return Number.isFinite(current) ? JSON.stringify(current) : 'null';
    case 'boolean':
      return current ? 'true' : 'false';
    case 'bigint':
      throw new TypeError(
        `canonicalJson: BigInt at ${pathOf(trail)} cannot be serialised. Convert it to a string or number before calling the tool.`,
      );
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
  }
  if (current === null) return 'null';
  const obj = current as object;
  if (trail.objects.includes(obj)) {
    throw new TypeError(
      `canonicalJson: cyclic structure at ${pathOf(trail)} cannot be serialised. Pass a tree, not a graph with back-references.`,
    );
  }
  // No try/finally: a throw abandons the whole trail, which belongs to this one canonicalJson call.
  trail.objects.push(obj);
  let out: string;
  if (Array.isArray(obj)) {
    // A plain loop, not map(): map skips holes of sparse arrays, which would write `[1,,2]`.
    let parts = '';
    for (let i = 0; i < obj.length; i++) {
      trail.keys.push(i);
      const written = write((obj as unknown[])[i], i, trail) ?? 'null';
      trail.keys.pop();
      parts = i === 0 ? written : `${parts},${written}`;
    }
    out = `[${parts}]`;
  } else {
    const record = obj as Record<string, unknown>;
    let parts = '';
    for (const k of Object.keys(record).sort()) {
      trail.keys.push(k);
      const written = write(record[k], k, trail);
      trail.keys.pop();
      if (written !== undefined)
        parts = parts === '' ? `${JSON.stringify(k)}:${written}` : `${parts},${JSON.stringify(k)}:${written}`;
    }
    out = `{${parts}}`;
  }
  trail.objects.pop();
  return out;
}
