import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Ownership } from '../../../src/cluster/ownership.js';
import { candidate, ownerOf } from '../../../src/cluster/rendezvous.js';
import { urlKey } from '../../../src/url/key.js';

const HOSTS = Array.from({ length: 300 }, (_, i) => `host${i}.example.org`);
const NODES = ['ws1-100', 'ws2-200', 'ws3-300'];

/** The owner as rendezvous hashing defines it, computed without Ownership. */
function expectedOwner(item: string, ids: readonly string[]): string {
  return ownerOf(item, ids.map(candidate))!;
}

describe('Ownership: --partition host', () => {
  test('alone, a node owns every host and every URL', () => {
    const o = new Ownership('ws1-100', 'host');
    assert.equal(o.liveCount, 1);
    assert.equal(o.partition, 'host');
    for (const h of HOSTS.slice(0, 20)) {
      assert.equal(o.hostOwner(h), 'ws1-100');
      assert.equal(o.ownsHost(h), true);
      assert.equal(o.ownsUrl(h, urlKey(`http://${h}/`)), true);
    }
  });

  test('every node computes the same owner, the rendezvous winner, and each host has exactly one owner', () => {
    const views = NODES.map((id) => new Ownership(id, 'host'));
    // Each node learns the live set in its own order.
    views[0]!.setLive(NODES);
    views[1]!.setLive([...NODES].reverse());
    views[2]!.setLive([NODES[1]!, NODES[2]!, NODES[0]!]);
    const counts = new Map<string, number>();
    for (const h of HOSTS) {
      const owner = expectedOwner(h, NODES);
      for (const v of views) assert.equal(v.hostOwner(h), owner, h);
      const owners = views.filter((v, i) => v.ownsHost(h) && NODES[i] === owner);
      assert.equal(views.filter((v) => v.ownsHost(h)).length, 1, `${h} has one owner`);
      assert.equal(owners.length, 1);
      counts.set(owner, (counts.get(owner) ?? 0) + 1);
    }
    // 300 hosts over 3 nodes: each gets a fair share (expected 100; binomial sd about 8).
    for (const id of NODES) assert.ok((counts.get(id) ?? 0) > 60, `${id} owns ${counts.get(id)}`);
  });

  test('ownsUrl follows the host owner, whatever the key', () => {
    const o = new Ownership('ws2-200', 'host');
    o.setLive(NODES);
    for (const h of HOSTS.slice(0, 50)) {
      for (const path of ['/', '/a', '/b?x=1']) {
        assert.equal(o.ownsUrl(h, urlKey(`http://${h}${path}`)), o.hostOwner(h) === 'ws2-200');
      }
    }
  });

  test('setLive says whether the set changed, whatever the order', () => {
    const o = new Ownership('ws1-100', 'host');
    assert.equal(o.setLive(['ws1-100']), false, 'the initial set is this node alone');
    assert.equal(o.setLive(NODES), true);
    assert.equal(o.liveCount, 3);
    assert.equal(o.setLive([...NODES].reverse()), false);
    assert.equal(o.setLive(NODES.slice(0, 2)), true);
    assert.equal(o.liveCount, 2);
  });

  test('cached owners are dropped when the live set changes', () => {
    const o = new Ownership('ws1-100', 'host');
    o.setLive(NODES);
    // Fill the cache, then remember which hosts another node owned.
    const before = new Map(HOSTS.map((h) => [h, o.hostOwner(h)]));
    const others = HOSTS.filter((h) => before.get(h) !== 'ws1-100');
    assert.ok(others.length > 0);
    o.setLive(['ws1-100']);
    for (const h of others) {
      assert.equal(o.hostOwner(h), 'ws1-100', `${h} must be ours once we are alone`);
      assert.equal(o.ownsHost(h), true);
    }
    o.setLive(NODES);
    for (const h of HOSTS) assert.equal(o.hostOwner(h), before.get(h), 'back to the same owners');
  });

  test('a node that joins takes hosts only for itself; a node that leaves gives up only its own', () => {
    const two = new Ownership('ws1-100', 'host');
    two.setLive(NODES.slice(0, 2));
    const three = new Ownership('ws1-100', 'host');
    three.setLive(NODES);
    let moved = 0;
    for (const h of HOSTS) {
      const a = two.hostOwner(h);
      const b = three.hostOwner(h);
      if (a !== b) {
        moved++;
        assert.equal(b, 'ws3-300', `${h} moved from ${a} to ${b}, not to the joining node`);
      }
    }
    assert.ok(moved > 0 && moved < HOSTS.length);
  });
});

describe('Ownership: --partition url', () => {
  test('every node crawls every host; each URL key has exactly one owner, the rendezvous winner', () => {
    const views = NODES.map((id) => {
      const o = new Ownership(id, 'url');
      o.setLive(NODES);
      return o;
    });
    const counts = new Map<string, number>();
    for (let i = 0; i < 300; i++) {
      const host = 'big.example.org';
      const key = urlKey(`http://${host}/page/${i}`);
      for (const v of views) assert.equal(v.ownsHost(host), true);
      const owners = NODES.filter((_, j) => views[j]!.ownsUrl(host, key));
      assert.deepEqual(owners, [expectedOwner(key, NODES)]);
      counts.set(owners[0]!, (counts.get(owners[0]!) ?? 0) + 1);
    }
    for (const id of NODES) assert.ok((counts.get(id) ?? 0) > 60, `${id} owns ${counts.get(id)} URLs`);
  });

  test('alone, a node owns every URL; after others join, only its share', () => {
    const o = new Ownership('ws1-100', 'url');
    const keys = Array.from({ length: 100 }, (_, i) => urlKey(`http://big.example.org/${i}`));
    for (const k of keys) assert.equal(o.ownsUrl('big.example.org', k), true);
    o.setLive(NODES);
    const mine = keys.filter((k) => o.ownsUrl('big.example.org', k));
    assert.ok(mine.length > 0 && mine.length < keys.length);
    for (const k of keys) assert.equal(o.ownsUrl('big.example.org', k), expectedOwner(k, NODES) === 'ws1-100');
    o.setLive(['ws1-100']);
    for (const k of keys) assert.equal(o.ownsUrl('big.example.org', k), true);
  });
});

describe('Ownership: lending hosts (docs/protocol.md, "Lending hosts")', () => {
  /** A host whose rendezvous winner among NODES is `winner`. */
  function hostOf(winner: string): string {
    return HOSTS.find((h) => expectedOwner(h, NODES) === winner)!;
  }
  function view(id: string): Ownership {
    const o = new Ownership(id, 'host');
    o.setLive(NODES);
    return o;
  }
  const [A, B, C] = NODES as [string, string, string];

  test("a lend by the host's rendezvous winner moves the host to the borrower, on every node that read the lender's record", () => {
    const h = hostOf(A);
    const lender = view(A);
    lender.lend(h, B);
    assert.equal(lender.hostOwner(h), B);
    assert.equal(lender.ownsHost(h), false);
    const record = { id: A, counter: 7, lent: lender.ownLends() };
    assert.deepEqual(record.lent, { [h]: B });
    for (const id of [B, C]) {
      const o = view(id);
      assert.equal(o.hostOwner(h), A, 'before the record is read');
      assert.equal(o.setPeerLends([record]), true);
      assert.equal(o.hostOwner(h), B);
      assert.equal(o.ownsHost(h), id === B);
      assert.equal(o.setPeerLends([record]), false, 'the same record again changes nothing');
    }
  });

  test('a lend by a node that is not the rendezvous winner counts nowhere', () => {
    const h = hostOf(A);
    assert.throws(() => view(B).lend(h, C));
    const o = view(C);
    o.setPeerLends([{ id: B, counter: 3, lent: { [h]: C } }]);
    assert.equal(o.hostOwner(h), A);
    assert.deepEqual(o.noteLent(B, 3, [h]), []);
    assert.equal(o.hostOwner(h), A);
  });

  test('a lend ends when the borrower leaves, and when the lender does (the host goes to the new winner)', () => {
    const h = hostOf(A);
    const lender = view(A);
    lender.lend(h, B);
    const other = view(C);
    other.setPeerLends([{ id: A, counter: 1, lent: { [h]: B } }]);
    assert.equal(other.hostOwner(h), B);
    // The borrower left: the lender has the host again and drops the lend from its record.
    lender.setLive([A, C]);
    other.setLive([A, C]);
    assert.equal(lender.hostOwner(h), A);
    assert.equal(other.hostOwner(h), A);
    assert.equal(lender.ownLends(), undefined);
    // It came back: it gets nothing back.
    lender.setLive(NODES);
    assert.equal(lender.hostOwner(h), A);
    // The lender left: its lends count no more, the host goes to the winner among the rest.
    const o = view(C);
    o.setPeerLends([{ id: A, counter: 1, lent: { [h]: B } }]);
    o.setLive([B, C]);
    assert.equal(o.hostOwner(h), expectedOwner(h, [B, C]));
  });

  test('a lend ends when its borrower is started again with its id (lost, and live again): the lender has the host again', () => {
    const h = hostOf(A);
    const lender = view(A);
    lender.lend(h, B);
    assert.equal(lender.setLive(NODES, [B]), true, 'the live set is the same, a node in it is new');
    assert.equal(lender.hostOwner(h), A);
    assert.equal(lender.ownLends(), undefined);
    assert.equal(lender.setLive(NODES, ['gone']), false, 'a node lost that is not live again changes nothing more');
  });

  test("a hand-off's lend counts at once, until the lender's record of that counter or later is read", () => {
    const h = hostOf(A);
    const borrower = view(B);
    assert.deepEqual(borrower.noteLent(A, 5, [h]), [h]);
    assert.equal(borrower.ownsHost(h), true);
    // An older record (written before the lend) does not take it back...
    borrower.setPeerLends([{ id: A, counter: 4 }]);
    assert.equal(borrower.ownsHost(h), true);
    // ...the record that names it keeps it...
    borrower.setPeerLends([{ id: A, counter: 5, lent: { [h]: B } }]);
    assert.equal(borrower.ownsHost(h), true);
    // ...and a later record without it ends it.
    assert.equal(borrower.setPeerLends([{ id: A, counter: 9 }]), true);
    assert.equal(borrower.ownsHost(h), false);
    // A hand-off older than the record read is ignored.
    assert.deepEqual(borrower.noteLent(A, 8, [h]), []);
  });

  test("a hand-off's lend that no record confirms ends after a few observations (a lender restarted with a new counter)", () => {
    const h = hostOf(A);
    const borrower = view(B);
    borrower.noteLent(A, 50, [h]);
    let observations = 0;
    while (borrower.ownsHost(h)) {
      borrower.setPeerLends([{ id: A, counter: 1 }]);
      observations++;
      assert.ok(observations <= 5, 'still lent');
    }
    assert.equal(observations, 3);
  });

  test("a hand-off's lend ends with its lender: a lender that is not live (its record unread) lends nothing", () => {
    const h = hostOf(A);
    const borrower = view(B);
    borrower.noteLent(A, 5, [h]);
    assert.equal(borrower.setPeerLends([{ id: C, counter: 1 }]), true, 'A was not among the live records');
    borrower.setLive(NODES); // A back in the live set, with no record of a lend
    assert.equal(borrower.ownsHost(h), false);
  });

  test('lendsInForce lists the lends that count, for the leaving-done snapshot', () => {
    const h = hostOf(A);
    const g = hostOf(C);
    const o = view(B);
    o.setPeerLends([
      { id: A, counter: 1, lent: { [h]: B } },
      { id: C, counter: 1, lent: { [g]: 'nobody' } },
    ]);
    assert.deepEqual([...o.lendsInForce()], [[h, B]]);
  });
});
