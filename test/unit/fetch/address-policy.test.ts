import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isPrivateAddress, publicOnlyLookup } from '../../../src/fetch/address-policy.js';

describe('isPrivateAddress', () => {
  const privateRanges: readonly (readonly [string, readonly string[]])[] = [
    ['10.0.0.0/8', ['10.0.0.1', '10.255.255.255']],
    ['172.16.0.0/12', ['172.16.0.1', '172.31.255.255']],
    ['192.168.0.0/16', ['192.168.0.1', '192.168.255.254']],
    ['127.0.0.0/8 (loopback)', ['127.0.0.1', '127.1.2.3', '127.255.255.254']],
    ['169.254.0.0/16 (link-local, cloud metadata)', ['169.254.0.1', '169.254.169.254']],
    ['0.0.0.0/8', ['0.0.0.0']],
    ['100.64.0.0/10 (carrier-grade NAT)', ['100.64.0.1', '100.127.255.255']],
    ['224.0.0.0/4 (multicast) and 240.0.0.0/4', ['224.0.0.1', '255.255.255.255']],
    ['::1 (loopback)', ['::1', '0:0:0:0:0:0:0:1']],
    [':: (unspecified)', ['::']],
    ['fc00::/7 (unique local)', ['fc00::1', 'fd12:3456:789a::1']],
    ['fe80::/10 (link-local)', ['fe80::1', 'febf::1', 'FE80::ABCD']],
    ['ff00::/8 (multicast)', ['ff02::1']],
    ['IPv4-mapped IPv6 of a private address', ['::ffff:10.0.0.1', '::FFFF:127.0.0.1', '::ffff:a00:1', '0:0:0:0:0:ffff:10.0.0.1']],
  ];
  for (const [range, addresses] of privateRanges) {
    test(`private: ${range}`, () => {
      for (const a of addresses) assert.equal(isPrivateAddress(a), true, a);
    });
  }

  test('public: the neighbours of each private range and ordinary addresses', () => {
    const publicAddresses = [
      '8.8.8.8',
      '1.1.1.1',
      '93.184.216.34',
      '9.255.255.255',
      '11.0.0.0',
      '172.15.255.255',
      '172.32.0.0',
      '192.167.255.255',
      '192.169.0.0',
      '126.255.255.255',
      '128.0.0.0',
      '169.253.255.255',
      '169.255.0.0',
      '100.63.255.255',
      '100.128.0.0',
      '2001:4860:4860::8888',
      '2606:4700:4700::1111',
      'fec0::1', // fe80::/10 ends at febf
      'fbff::1', // fc00::/7 starts at fc00
      '::ffff:8.8.8.8',
    ];
    for (const a of publicAddresses) assert.equal(isPrivateAddress(a), false, a);
  });

  test('what is not an IP address is not judged here', () => {
    for (const a of ['example.com', 'localhost', '', '10.0.0', '10.0.0.1.5']) assert.equal(isPrivateAddress(a), false, a);
  });
});

describe('publicOnlyLookup', () => {
  // Only literal loopback addresses are looked up: dns.lookup answers those without a query.
  test('a name that resolves to a private address fails with EPRIVATE', async () => {
    const err = await new Promise<NodeJS.ErrnoException | null>((resolve) => {
      publicOnlyLookup('127.0.0.1', {}, (e) => resolve(e));
    });
    assert.ok(err !== null);
    assert.equal(err.code, 'EPRIVATE');
    assert.match(err.message, /127\.0\.0\.1/);
  });

  test('IPv6 loopback too', async () => {
    const err = await new Promise<NodeJS.ErrnoException | null>((resolve) => {
      publicOnlyLookup('::1', { all: true }, (e) => resolve(e));
    });
    assert.equal(err?.code, 'EPRIVATE');
  });
});
