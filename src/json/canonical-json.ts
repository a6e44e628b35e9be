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
  const out = write(value, '', '$', new Set<object>());
  return out ?? 'null';
}

function write(value: unknown, key: string, path: string, ancestors: Set<object>): string | undefined {
  let current = value;
  if (
    typeof current === 'object' &&
    current !== null &&
    typeof (current as { toJSON?: unknown }).toJSON === 'function'
  ) {
    current = (current as { toJSON: (key: string) => unknown }).toJSON(key);
  }
  switch (typeof current) {
    case 'string':
      return JSON.stringify(current);
    case 'number':
      return Number.isFinite(current) ? JSON.stringify(current) : 'null';
    case 'boolean':
      return current ? 'true' : 'false';
    case 'bigint':
      throw new TypeError(
        `canonicalJson: BigInt at ${path} cannot be serialised. Convert it to a string or number before calling the tool.`,
      );
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
  }
  if (current === null) return 'null';
  const obj = current as object;
  if (ancestors.has(obj)) {
    throw new TypeError(
      `canonicalJson: cyclic structure at ${path} cannot be serialised. Pass a tree, not a graph with back-references.`,
    );
  }
  ancestors.add(obj);
  try {
    if (Array.isArray(obj)) {
      // A plain loop, not map(): map skips holes of sparse arrays, which would write `[1,,2]`.
      const parts: string[] = [];
      for (let i = 0; i < obj.length; i++) {
        parts.push(write((obj as unknown[])[i], String(i), `${path}[${i}]`, ancestors) ?? 'null');
      }
      return `[${parts.join(',')}]`;
    }
    const record = obj as Record<string, unknown>;
    const parts: string[] = [];
    for (const k of Object.keys(record).sort()) {
      const written = write(record[k], k, `${path}.${k}`, ancestors);
      if (written !== undefined) parts.push(`${JSON.stringify(k)}:${written}`);
    }
    return `{${parts.join(',')}}`;
  } finally {
    ancestors.delete(obj);
  }
}
