import { describe, expect, it } from '@jest/globals';
import { runInNewContext } from 'node:vm';
import { ChamviError, defaultEffectKey } from '../../src/index.js';
import { canonicalJson } from '../../src/json/canonical-json.js';
import { UnsupportedJsonValueError } from '../../src/errors/errors.js';

/** The error canonicalJson throws for `value`, or a failure when it throws none. */
function rejection(value: unknown): UnsupportedJsonValueError {
  try {
    canonicalJson(value);
  } catch (error) {
    return error as UnsupportedJsonValueError;
  }
  throw new Error(`canonicalJson accepted ${String(value)}`);
}

class Point {
  constructor(
    readonly x: number,
    readonly y: number,
  ) {}
}

describe('canonicalJson', () => {
  it('sorts object keys at every depth, inside arrays too', () => {
    const a = { z: 1, a: { y: [{ d: 1, c: 2 }], b: { f: 1, e: 2 } } };
    const b = { a: { b: { e: 2, f: 1 }, y: [{ c: 2, d: 1 }] }, z: 1 };
    expect(canonicalJson(a)).toBe('{"a":{"b":{"e":2,"f":1},"y":[{"c":2,"d":1}]},"z":1}');
    expect(canonicalJson(b)).toBe(canonicalJson(a));
  });

  it('sorts keys by UTF-16 code unit, the same in every locale', () => {
    expect(canonicalJson({ b: 1, B: 2, ä: 3, a: 4, '10': 5, '9': 6 })).toBe('{"10":5,"9":6,"B":2,"a":4,"b":1,"ä":3}');
  });

  it('drops undefined properties at every depth (the spec: undefined is dropped)', () => {
    expect(canonicalJson({ a: undefined, b: { c: undefined, f: 1 } })).toBe('{"b":{"f":1}}');
  });

  it('honours toJSON: a Date becomes its ISO string, at any depth, and toJSON gets its key', () => {
    const when = new Date('2030-05-06T07:08:09.010Z');
    expect(canonicalJson({ when, list: [when] })).toBe(
      '{"list":["2030-05-06T07:08:09.010Z"],"when":"2030-05-06T07:08:09.010Z"}',
    );
    const keys: string[] = [];
    const custom = {
      toJSON(key: string) {
        keys.push(key);
        return { z: 1, a: 2 };
      },
    };
    expect(canonicalJson({ x: custom })).toBe('{"x":{"a":2,"z":1}}');
    expect(keys).toEqual(['x']);
  });

  it('matches JSON.stringify for primitives and null, and writes -0 as 0 (equal numbers, one key)', () => {
    for (const v of ['s"\n\u2028', 0, -1.5, 1e21, true, false, null]) expect(canonicalJson(v)).toBe(JSON.stringify(v));
    expect(canonicalJson({ a: -0, b: [-0] })).toBe('{"a":0,"b":[0]}');
    expect(canonicalJson(Object.create(null))).toBe('{}');
  });

  it('writes boxed primitives as their values, as JSON does', () => {
    const boxed = { s: new String('ab'), n: new Number(2), b: new Boolean(false) };
    expect(canonicalJson(boxed)).toBe('{"b":false,"n":2,"s":"ab"}');
    expect(canonicalJson(boxed)).toBe(JSON.stringify({ b: false, n: 2, s: 'ab' }));
  });

  it('throws a TypeError naming BigInt and where it is, never a silent key', () => {
    expect(() => canonicalJson({ a: [1, { n: 10n }] })).toThrow(TypeError);
    expect(() => canonicalJson({ a: [1, { n: 10n }] })).toThrow(/BigInt at \$\.a\[1\]\.n/);
  });

  it('throws a TypeError naming the cycle, never a stack overflow', () => {
    const node: Record<string, unknown> = { name: 'n' };
    node['children'] = [{ parent: node }];
    let error: unknown;
    try {
      canonicalJson(node);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toMatch(/cyclic structure at \$\.children\[0\]\.parent/);
    const list: unknown[] = [];
    list.push(list);
    expect(() => canonicalJson(list)).toThrow(/cyclic/);
  });

  it('a shared non-cyclic reference used twice is not a cycle', () => {
    const shared = { k: 1 };
    expect(canonicalJson({ a: shared, b: shared, c: [shared, shared] })).toBe(
      '{"a":{"k":1},"b":{"k":1},"c":[{"k":1},{"k":1}]}',
    );
  });

  it.each<[string, () => unknown, RegExp]>([
    ['NaN', () => ({ price: NaN }), /NaN at \$\.price .*write it as null/],
    ['Infinity', () => ({ a: [Infinity] }), /Infinity at \$\.a\[0\]/],
    ['-Infinity', () => -Infinity, /-Infinity at \$ /],
    ['a Map', () => ({ m: new Map([['k', 1]]) }), /a Map at \$\.m .*Object\.fromEntries/],
    ['a Set', () => ({ s: new Set([1]) }), /a Set at \$\.s .*\[\.\.\.set\]/],
    ['a WeakMap', () => ({ w: new WeakMap() }), /a WeakMap at \$\.w/],
    ['a RegExp', () => ({ r: /x/g }), /a RegExp at \$\.r .*regexp\.source/],
    ['a typed array', () => ({ bytes: new Uint8Array([1, 2]) }), /a Uint8Array at \$\.bytes .*Array\.from/],
    ['an ArrayBuffer', () => ({ buf: new ArrayBuffer(2) }), /an? ArrayBuffer at \$\.buf/],
    ['a DataView', () => ({ v: new DataView(new ArrayBuffer(2)) }), /a DataView at \$\.v/],
    ['a class instance without toJSON', () => ({ p: new Point(1, 2) }), /a Point instance at \$\.p .*toJSON/],
    ['an invalid Date', () => ({ when: new Date('nope') }), /an invalid Date at \$\.when/],
    ['an undefined array element', () => [1, undefined], /undefined array element at \$\[1\] .*write it as null/],
    // eslint-disable-next-line no-sparse-arrays
    ['an array hole', () => [1, , 2], /undefined array element at \$\[1\]/],
    ['a function array element', () => ({ l: [() => 1] }), /a function array element at \$\.l\[0\]/],
    ['a function property', () => ({ f: () => 1 }), /a function at \$\.f .*drop it/],
    ['a symbol property', () => ({ s: Symbol('s') }), /a symbol at \$\.s/],
    ['a symbol-keyed property', () => ({ a: { [Symbol('tag')]: 1 } }), /symbol-keyed property Symbol\(tag\) at \$\.a/],
    ['undefined as the whole input', () => undefined, /undefined at \$ .*pass null or \{\}/],
  ])('rejects %s, naming its path and the fix, instead of writing it lossily', (_what, make, message) => {
    const error = rejection(make());
    expect(error).toBeInstanceOf(TypeError);
    expect(UnsupportedJsonValueError.isInstance(error)).toBe(true);
    expect(error.message).toMatch(message);
    expect(error.message).toMatch(/Convert it before calling the tool .*or give the tool an effectKey/);
  });

  it('two different inputs never share a default key: each lossy value throws rather than colliding with its JSON form', () => {
    const pairs: Array<[unknown, unknown]> = [
      [{ v: NaN }, { v: null }],
      [{ v: Infinity }, { v: null }],
      [{ v: new Map([['a', 1]]) }, { v: new Map([['b', 2]]) }],
      [{ v: new Set([1]) }, { v: {} }],
      [{ v: /a/ }, { v: /b/ }],
      [{ v: new Uint8Array([1]) }, { v: { '0': 1 } }],
      [{ v: new Point(1, 2) }, { v: { x: 1, y: 2 } }],
      [[undefined], [null]],
    ];
    for (const [lossy, other] of pairs) {
      // In their JSON form the two collide: that is the silent collision being closed.
      expect(canonicalJson(lossy, { faithful: false })).toBe(canonicalJson(other, { faithful: false }));
      expect(() => defaultEffectKey('r', 't', lossy)).toThrow(UnsupportedJsonValueError);
    }
  });

  it('keeps values with toJSON working through it: a Date, a Buffer, a URL, a class with toJSON', () => {
    class Money {
      constructor(readonly cents: number) {}
      toJSON() {
        return { cents: this.cents, currency: 'EUR' };
      }
    }
    expect(canonicalJson({ m: new Money(5) })).toBe('{"m":{"cents":5,"currency":"EUR"}}');
    expect(canonicalJson({ u: new URL('https://x.test/a') })).toBe('{"u":"https://x.test/a"}');
    expect(canonicalJson(Buffer.from([1]))).toBe('{"data":[1],"type":"Buffer"}');
    expect(canonicalJson({ when: new Date(0) })).toBe('{"when":"1970-01-01T00:00:00.000Z"}');
  });

  it('takes a plain object made in another realm (a vm context) as plain', () => {
    const foreign = runInNewContext('({ b: [1, { c: 2 }], a: Object.create(null) })') as unknown;
    expect(canonicalJson(foreign)).toBe('{"a":{},"b":[1,{"c":2}]}');
    expect(() => canonicalJson(runInNewContext('({ m: new Map() })'))).toThrow(/a Map at \$\.m/);
  });

  it("the error is non-retryable and one of this library's errors, so Temporal activities do not retry it", () => {
    const error = rejection({ n: NaN });
    expect(error.name).toBe('UnsupportedJsonValueError');
    expect(error.retryable).toBe(false);
    expect(error.path).toBe('$.n');
    expect(error.valueKind).toBe('NaN');
    expect(ChamviError.isInstance(error)).toBe(true);
    expect(UnsupportedJsonValueError.isInstance(new TypeError('x'))).toBe(false);
  });

  it('faithful: false writes what JSON.stringify writes (for explaining a JSON failure), still throwing for BigInt', () => {
    const lossy = { a: NaN, m: new Map(), l: [undefined, () => 1], f: () => 1 };
    expect(canonicalJson(lossy, { faithful: false })).toBe('{"a":null,"l":[null,null],"m":{}}');
    expect(canonicalJson(lossy, { faithful: false })).toBe(JSON.stringify({ a: null, l: [null, null], m: {} }));
    expect(canonicalJson(undefined, { faithful: false })).toBe('null');
    expect(() => canonicalJson({ n: 1n }, { faithful: false })).toThrow(/BigInt at \$\.n/);
  });
});
