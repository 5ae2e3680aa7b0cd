import { expect } from 'chai';
import { fleetPeers, samePeers, urlPeer } from '../../../lib/deploy/fleet-peers.ts';

describe('fleetPeers', () => {
  it('lists the endpoints with a peer once per name, sorted by name, whatever order discovery found them in', () => {
    const peers = fleetPeers([
      { id: 'ns/haproxy-1', url: 'http://10.0.0.8:5555', peer: { name: 'haproxy-1', address: '10.0.0.8' } },
      { id: 'local', url: 'file:' },
      { id: 'ns/haproxy-0', url: 'http://10.0.0.7:5555', peer: { name: 'haproxy-0', address: '10.0.0.7' } },
    ]);
    expect(peers).to.deep.equal([
      { name: 'haproxy-0', address: '10.0.0.7' },
      { name: 'haproxy-1', address: '10.0.0.8' },
    ]);
  });

  it('tells a fleet that changed an address or a member from one that did not', () => {
    const a = [{ name: 'haproxy-0', address: '10.0.0.7' }];
    expect(samePeers(a, [{ name: 'haproxy-0', address: '10.0.0.7' }])).to.equal(true);
    expect(samePeers(a, [{ name: 'haproxy-0', address: '10.0.0.9' }])).to.equal(false);
    expect(samePeers(a, [...a, { name: 'haproxy-1', address: '10.0.0.8' }])).to.equal(false);
  });
});

describe('urlPeer', () => {
  it("names a fixed Data Plane API's HAProxy by the URL's host, its address too", () => {
    expect(urlPeer('http://127.0.0.2:5555/v3')).to.deep.equal({ name: '127.0.0.2', address: '127.0.0.2' });
    expect(urlPeer('https://haproxy-a.example:5555')).to.deep.equal({ name: 'haproxy-a.example', address: 'haproxy-a.example' });
    expect(urlPeer('http://[fd00::2]:5555')).to.deep.equal({ name: 'fd00::2', address: 'fd00::2' });
  });
});
