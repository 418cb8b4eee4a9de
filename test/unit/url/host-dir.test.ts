import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { hostDirOfAuthority, hostDirOfNormalized, isSafeHostDir, MAX_HOST_DIR_LENGTH } from '../../../src/url/host-dir.js';

describe('hostDirOfNormalized', () => {
  const cases: readonly (readonly [string, string | undefined])[] = [
    ['http://example.com/', 'example.com'],
    ['https://example.com', 'example.com'],
    ['http://example.com:8080/x', 'example.com_8080'],
    ['https://example.com:80/', 'example.com_80'],
    ['http://127.0.0.1:8080/a/b:1', '127.0.0.1_8080'],
    ['http://a/b:1', 'a'],
    ['http://xn--mnchen-3ya.de/', 'xn--mnchen-3ya.de'],
    ['http://[::1]:8080/x', '[--1]_8080'],
    ['http://[::1]/', '[--1]'],
    ['https://[2001:db8::1]:8443/', '[2001-db8--1]_8443'],
    // Not normalized, or not a URL: no directory.
    ['http://Example.com/', undefined],
    ['example.com/x', undefined],
    ['http:///', undefined],
    ['http://[::1/', undefined],
    ['http://[::1]x/', undefined],
    ['http://example.com:123456/', undefined],
  ];
  for (const [url, dir] of cases) {
    test(`${url} -> ${String(dir)}`, () => {
      assert.equal(hostDirOfNormalized(url), dir);
    });
  }
});

describe('hostDirOfAuthority', () => {
  test('a port becomes _port', () => {
    assert.equal(hostDirOfAuthority('example.com'), 'example.com');
    assert.equal(hostDirOfAuthority('example.com:8080'), 'example.com_8080');
    assert.equal(hostDirOfAuthority('10.0.0.1:1'), '10.0.0.1_1');
    assert.equal(hostDirOfAuthority('example.com:65535'), 'example.com_65535');
  });

  test('IPv6 keeps its brackets with every : turned into -', () => {
    assert.equal(hostDirOfAuthority('[::1]:8080'), '[--1]_8080');
    assert.equal(hostDirOfAuthority('[::1]'), '[--1]');
    assert.equal(hostDirOfAuthority('[2001:db8::1]'), '[2001-db8--1]');
    assert.equal(hostDirOfAuthority('[::ffff:a00:1]:80'), '[--ffff-a00-1]_80');
  });

  test('a malformed authority gives no directory', () => {
    assert.equal(hostDirOfAuthority('[::1]8080'), undefined, 'no colon after ]');
    assert.equal(hostDirOfAuthority('[::1'), undefined, 'no ]');
    assert.equal(hostDirOfAuthority('x:port'), undefined, 'port not a number');
    assert.equal(hostDirOfAuthority('x:123456'), undefined, 'port of 6 digits');
    assert.equal(hostDirOfAuthority('a:b:c'), undefined);
    assert.equal(hostDirOfAuthority(''), undefined);
  });

  test('nothing unsafe passes', () => {
    for (const bad of ['..', '.', '.hidden', '..:80', 'a/b', 'a\0b', 'Example.com', 'ex ample', 'é.com', 'a\\b', 'a'.repeat(256)]) {
      assert.equal(hostDirOfAuthority(bad), undefined, JSON.stringify(bad));
    }
  });

  test('a host name that ends like a port suffix is refused (it would share the directory of host:port)', () => {
    assert.equal(hostDirOfAuthority('a_8080'), undefined);
    assert.equal(hostDirOfAuthority('a_8080:81'), undefined);
    assert.equal(hostDirOfAuthority('a:8080'), 'a_8080');
    assert.equal(hostDirOfAuthority('x_y.example'), 'x_y.example');
    assert.equal(hostDirOfAuthority('a_b'), 'a_b');
  });

  test('the 160-byte limit counts the _port suffix', () => {
    assert.equal(hostDirOfAuthority(`${'a'.repeat(155)}:8080`), `${'a'.repeat(155)}_8080`);
    assert.equal(hostDirOfAuthority(`${'a'.repeat(156)}:8080`), undefined);
  });
});

describe('isSafeHostDir', () => {
  test('accepts lowercase host names, IPv4, IPv6 and _port forms', () => {
    const good = [
      'example.com',
      'example.com_8080',
      'xn--mnchen-3ya.de',
      'x_y.example',
      '127.0.0.1',
      '127.0.0.1_80',
      '[--1]',
      '[--1]_8080',
      '[2001-db8--1]_8443',
      '[--ffff-10.0.0.1]',
      'a..b', // dots inside a name are harmless: it is one path component
      'a'.repeat(MAX_HOST_DIR_LENGTH),
    ];
    for (const dir of good) assert.ok(isSafeHostDir(dir), dir);
  });

  test('rejects what could escape the directory or hide', () => {
    const bad = [
      '',
      '.',
      '..',
      '.hidden',
      '.example.com',
      'a/b',
      '/',
      '../etc',
      'a\\b',
      'a\0b',
      '\0',
      'a b',
      'a:b',
      'a~b', // `~` separates the parts of temporary names (src/store/layout.ts)
    ];
    for (const dir of bad) assert.ok(!isSafeHostDir(dir), JSON.stringify(dir));
  });

  test('rejects uppercase and non-ASCII: directory names are normalized forms only', () => {
    for (const dir of ['Example.com', 'EXAMPLE.COM_80', 'münchen.de', '[--1A]', '[--1]_80x']) {
      assert.ok(!isSafeHostDir(dir), dir);
    }
  });

  test('rejects names over 160 bytes, so that lease and temporary names still fit in 255', () => {
    assert.equal(MAX_HOST_DIR_LENGTH, 160);
    assert.ok(isSafeHostDir('a'.repeat(160)));
    assert.ok(!isSafeHostDir('a'.repeat(161)));
    assert.ok(!isSafeHostDir(`${'a'.repeat(155)}_80800`), '161 with the port');
    const tempLease = `.${'a'.repeat(160)}.lease~${'n'.repeat(64)}~zzzzzz.tmp`;
    assert.ok(Buffer.byteLength(tempLease) <= 255, `${tempLease.length} bytes`);
  });

  test('every directory that hostDirOfAuthority returns is safe', () => {
    for (const auth of ['example.com', 'example.com:8080', '[::1]:8080', '127.0.0.1:80', 'a-b.c_d']) {
      const dir = hostDirOfAuthority(auth);
      assert.ok(dir !== undefined && isSafeHostDir(dir), auth);
    }
  });
});
