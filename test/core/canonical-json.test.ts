import { describe, expect, it } from '@jest/globals';
import { canonicalJson } from '../../src/index.js';

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

  it('drops undefined, function and symbol properties at every depth', () => {
    expect(canonicalJson({ a: undefined, b: { c: undefined, d: () => 1, e: Symbol('s'), f: 1 } })).toBe(
      '{"b":{"f":1}}',
    );
  });

  it('writes an undefined array element (and a hole, a function) as null, as JSON does', () => {
    // eslint-disable-next-line no-sparse-arrays
    expect(canonicalJson([1, undefined, , () => 1, 2])).toBe('[1,null,null,null,2]');
    expect(canonicalJson([1, undefined, 2])).toBe(JSON.stringify([1, undefined, 2]));
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

  it('matches JSON.stringify for primitives, and writes non-finite numbers as null', () => {
    for (const v of ['s"\n\u2028', 0, -1.5, 1e21, true, false, null]) expect(canonicalJson(v)).toBe(JSON.stringify(v));
    expect(canonicalJson({ a: NaN, b: Infinity })).toBe('{"a":null,"b":null}');
    expect(canonicalJson(undefined)).toBe('null');
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
});
