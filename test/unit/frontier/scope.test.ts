import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { domainOf, hostnameOfHostDir, ScopeFilter } from '../../../src/frontier/scope.js';

describe('hostnameOfHostDir', () => {
  test('drops the _port suffix only', () => {
    assert.equal(hostnameOfHostDir('example.com_8080'), 'example.com');
    assert.equal(hostnameOfHostDir('example.com'), 'example.com');
    assert.equal(hostnameOfHostDir('x_y.example'), 'x_y.example');
    assert.equal(hostnameOfHostDir('[--1]_8080'), '[--1]');
    assert.equal(hostnameOfHostDir('127.0.0.1_80'), '127.0.0.1');
  });
});

describe('domainOf (the Public Suffix List, through tldts)', () => {
  test('the last two labels', () => {
    assert.equal(domainOf('www.example.com'), 'example.com');
    assert.equal(domainOf('a.b.c.example.org'), 'example.org');
    assert.equal(domainOf('example.com'), 'example.com');
    assert.equal(domainOf('localhost'), 'localhost');
  });

  test('three labels under a short second-level label of a country code (example.co.uk)', () => {
    assert.equal(domainOf('www.example.co.uk'), 'example.co.uk');
    assert.equal(domainOf('shop.example.com.au'), 'example.com.au');
    assert.equal(domainOf('bbc.co.uk'), 'bbc.co.uk');
  });

  test('a short name under a country code is a registrable domain of its own', () => {
    assert.equal(domainOf('www.abc.de'), 'abc.de');
    assert.equal(domainOf('shop.abc.de'), 'abc.de');
    assert.equal(domainOf('www.example.de'), 'example.de');
  });

  test('IP addresses are their own domain', () => {
    assert.equal(domainOf('127.0.0.1'), '127.0.0.1');
    assert.equal(domainOf('10.1.2.3'), '10.1.2.3');
    assert.equal(domainOf('[--1]'), '[--1]');
  });

  test('a trailing dot does not make an empty label', () => {
    assert.equal(domainOf('www.example.com.'), 'example.com');
  });
});

describe('ScopeFilter', () => {
  test("scope 'host': only the seeds' hosts, ports included", () => {
    const s = new ScopeFilter('host', [], []);
    s.addSeed('example.com');
    s.addSeed('127.0.0.2_8080');
    assert.equal(s.seedHostCount, 2);
    assert.ok(s.hostInScope('example.com'));
    assert.ok(s.hostInScope('127.0.0.2_8080'));
    assert.ok(!s.hostInScope('www.example.com'));
    assert.ok(!s.hostInScope('example.com_8080'));
    assert.ok(!s.hostInScope('127.0.0.2'));
  });

  test("scope 'domain': every host and port of the seeds' domains", () => {
    const s = new ScopeFilter('domain', [], []);
    s.addSeed('www.example.com');
    assert.ok(s.hostInScope('example.com'));
    assert.ok(s.hostInScope('shop.example.com_8443'));
    assert.ok(!s.hostInScope('example.org'));
    assert.ok(!s.hostInScope('notexample.com'));
  });

  test("scope 'any': every host, even with no seed", () => {
    const s = new ScopeFilter('any', [], []);
    assert.ok(s.hostInScope('anything.example'));
    assert.equal(s.seedHostCount, 0);
  });

  test('a seed added twice counts once', () => {
    const s = new ScopeFilter('host', [], []);
    s.addSeed('example.com');
    s.addSeed('example.com');
    assert.equal(s.seedHostCount, 1);
  });

  test('no patterns: every URL is accepted', () => {
    assert.ok(new ScopeFilter('any', [], []).accepts('http://example.com/anything'));
  });

  test('--include: at least one pattern must match', () => {
    const s = new ScopeFilter('any', [/\/docs\//, /\/blog\//], []);
    assert.ok(s.accepts('http://example.com/docs/a'));
    assert.ok(s.accepts('http://example.com/blog/b'));
    assert.ok(!s.accepts('http://example.com/shop/c'));
  });

  test('--exclude: no pattern may match, and it wins over --include', () => {
    const s = new ScopeFilter('any', [/\/docs\//], [/\.pdf$/, /[?&]print=/]);
    assert.ok(s.accepts('http://example.com/docs/a.html'));
    assert.ok(!s.accepts('http://example.com/docs/a.pdf'));
    assert.ok(!s.accepts('http://example.com/docs/a?print=1'));
  });

  test('patterns see the whole normalized URL, scheme and host included', () => {
    const s = new ScopeFilter('any', [/^https:\/\/example\.com\//], []);
    assert.ok(s.accepts('https://example.com/x'));
    assert.ok(!s.accepts('http://example.com/x'));
  });
});
