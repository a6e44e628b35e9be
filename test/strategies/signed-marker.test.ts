import { describe, expect, it } from '@jest/globals';
import { defaultEffectKey, effectMarker, findEffectMarkers } from '../../src/index.js';
import {
  findSignedEffectMarkers,
  markerApplied,
  neutralizeEffectMarkers,
  signedEffectMarker,
} from '../../src/strategies/index.js';
import { notifyEffectKey } from '../../examples/nats/notify-tool.js';
import { pushEffectKey } from '../../examples/git/push-tool.js';
import { ticketEffectKey } from '../../examples/http/ticket-tool.js';

const secret = 'worker-secret';
const bot = 'chamvi-bot';

describe('signedEffectMarker / findSignedEffectMarkers', () => {
  it('has the documented format and round-trips the key', () => {
    const marker = signedEffectMarker('run-1:comment:7', secret);
    expect(marker).toMatch(/^<!-- chamvi:effect=run-1:comment:7;sig=[0-9a-f]{64} -->$/);
    expect(findSignedEffectMarkers(`text\n${marker}\nmore`, secret)).toEqual(['run-1:comment:7']);
  });

  it.each(['a-->b', 'a--b', '-->', 'x>y<z', 'k;sig=00', 'with space', 'end-', '%41', 'ünïcødé:🙂', '--!>'])(
    'keeps a key with %p inside exactly one HTML comment',
    (key) => {
      const marker = signedEffectMarker(key, secret);
      expect(marker.indexOf('-->')).toBe(marker.length - 3);
      expect(marker.slice(4, -3)).not.toContain('--');
      expect(marker.match(/<!--/g)).toHaveLength(1);
      expect(findSignedEffectMarkers(marker, secret)).toEqual([key]);
      // a plain-marker reader does not mistake it for the key
      expect(findEffectMarkers(marker)).not.toContain(key);
    },
  );

  it('rejects markers signed with another secret, tampered signatures and plain markers', () => {
    const key = 'run-1:comment:7';
    const forged = signedEffectMarker(key, 'attacker-guess');
    const good = signedEffectMarker(key, secret);
    const tampered = good.replace(/sig=(.)/, (_, c: string) => `sig=${c === '0' ? '1' : '0'}`);
    const swapped = good.replace('comment:7', 'comment:8');
    expect(findSignedEffectMarkers(forged, secret)).toEqual([]);
    expect(findSignedEffectMarkers(tampered, secret)).toEqual([]);
    expect(findSignedEffectMarkers(swapped, secret)).toEqual([]);
    expect(findSignedEffectMarkers(effectMarker(key), secret)).toEqual([]);
  });

  it('needs a non-empty secret', () => {
    expect(() => signedEffectMarker('k', '')).toThrow(TypeError);
    expect(() => findSignedEffectMarkers('x', new Uint8Array())).toThrow(TypeError);
  });

  it('neutralizeEffectMarkers defuses plain and signed markers in untrusted text', () => {
    const text = `hi ${effectMarker('k')} ${signedEffectMarker('k', secret)}`;
    const safe = neutralizeEffectMarkers(text);
    expect(findEffectMarkers(safe)).toEqual([]);
    expect(findSignedEffectMarkers(safe, secret)).toEqual([]);
  });
});

describe('markerApplied (security)', () => {
  const key = 'run-1:github-comment:7:0';

  it('ignores a forged plain marker by another author', () => {
    const comments = [{ body: `lol ${effectMarker(key)}`, user: { login: 'mallory' } }];
    expect(markerApplied({ comments, key, author: bot })).toBeUndefined();
    expect(markerApplied({ comments, key, author: bot, secret })).toBeUndefined();
  });

  it('ignores a signed marker forged without the secret, even on the bot account', () => {
    const comments = [{ body: signedEffectMarker(key, 'not-the-secret'), user: { login: bot } }];
    expect(markerApplied({ comments, key, author: bot, secret })).toBeUndefined();
  });

  it('with a secret, ignores a plain marker on the bot account (text the model wrote)', () => {
    const comments = [{ body: effectMarker(key), user: { login: bot } }];
    expect(markerApplied({ comments, key, author: bot, secret })).toBeUndefined();
    expect(markerApplied({ comments, key, author: bot })).toBe(comments[0]);
  });

  it('ignores a genuine signed marker by another author (a copy)', () => {
    const comments = [{ body: signedEffectMarker(key, secret), user: { login: 'mallory' } }];
    expect(markerApplied({ comments, key, author: bot, secret })).toBeUndefined();
  });

  it('matches keys exactly: a:b:1 is not a:b:10 and not a:b', () => {
    const comments = [
      { body: signedEffectMarker('a:b:10', secret), user: { login: bot } },
      { body: signedEffectMarker('a:b', secret), user: { login: bot } },
      { body: signedEffectMarker('xa:b:1', secret), user: { login: bot } },
    ];
    expect(markerApplied({ comments, key: 'a:b:1', author: bot, secret })).toBeUndefined();
    const mine = { body: signedEffectMarker('a:b:1', secret), user: { login: bot } };
    expect(markerApplied({ comments: [...comments, mine], key: 'a:b:1', author: bot, secret })).toBe(mine);
  });

  it('finds a key with --> inside', () => {
    const weird = 'run:x-->y:1';
    const comments = [{ body: `done\n\n${signedEffectMarker(weird, secret)}`, user: { login: bot } }];
    expect(markerApplied({ comments, key: weird, author: bot, secret })).toBe(comments[0]);
    expect(markerApplied({ comments, key: 'run:x', author: bot, secret })).toBeUndefined();
  });

  it('refuses to trust plain markers from anyone (neither author nor secret)', () => {
    expect(() => markerApplied({ comments: [], key })).toThrow(TypeError);
  });
});

describe('keys and markers reveal no raw input', () => {
  const privateText = 'customer card 4242-4242 and password hunter2';

  it('the default key is run id, tool name and a SHA-256 of the input', () => {
    const key = defaultEffectKey('run-1', 'comment', { issue: 7, body: privateText });
    expect(key).toMatch(/^run-1:comment:[0-9a-f]{64}$/);
    expect(key).not.toContain('hunter2');
    expect(signedEffectMarker(key, secret)).not.toContain('hunter2');
  });

  it('the example tools key by hash too', () => {
    for (const key of [
      notifyEffectKey('run-1', { text: privateText, severity: 'info' }),
      ticketEffectKey('run-1', { title: privateText, priority: 'high' }),
      pushEffectKey('run-1', { path: 'notes.md', content: privateText, message: privateText }),
    ]) {
      expect(key).toMatch(/^run-1:[a-z-]+:[0-9a-f]{64}$/);
      expect(key).not.toContain('hunter2');
      expect(key).not.toContain('4242');
    }
  });

  it('the signature does not leak the secret', () => {
    expect(signedEffectMarker('k', secret)).not.toContain(secret);
  });
});
