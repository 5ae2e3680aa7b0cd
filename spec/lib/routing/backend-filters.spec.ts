import { expect } from 'chai';
import type { RouteSettings } from '../../../lib/routing/settings.ts';
import { backendFiltersConflict, withBackendFilters } from '../../../lib/routing/backend-filters.ts';

/**
 * A backendRef's own filters joined to its rule's: the settings of its
 * requests, as if the rule's filters ran first and the backendRef's then.
 */

const header = (name: string, value: string) => ({ name, value });

describe("a backendRef's own filters with its rule's", () => {
  it("leaves the rule's settings as they are when the backendRef has none", () => {
    const rule: RouteSettings = { requestHeaders: { set: [header('X-A', '1')] } };
    expect(withBackendFilters(rule, undefined)).to.equal(rule);
  });

  it('keeps what only one of them sets, and lets the backendRef replace the Host and the whole path', () => {
    const rule: RouteSettings = { upstreamHost: 'rule.internal', rewrite: { kind: 'prefix', replacement: '/v1' }, responseHeaders: { add: [header('X-R', 'r')] } };
    const own: RouteSettings = { upstreamHost: 'own.internal', rewrite: { kind: 'full', path: '/only' }, requestHeaders: { set: [header('X-O', 'o')] } };
    expect(withBackendFilters(rule, own)).to.deep.equal({
      upstreamHost: 'own.internal',
      rewrite: { kind: 'full', path: '/only' },
      requestHeaders: { set: [header('X-O', 'o')] },
      responseHeaders: { add: [header('X-R', 'r')] },
    });
  });

  it("drops the rule's changes to a header the backendRef sets or removes (names in any case), and adds the backendRef's additions after the rule's", () => {
    const rule: RouteSettings = {
      requestHeaders: { set: [header('X-Set', 'rule'), header('X-Kept', 'rule')], add: [header('x-gone', 'rule'), header('X-Both', 'rule')], remove: ['X-Set', 'X-Other'] },
    };
    const own: RouteSettings = { requestHeaders: { set: [header('x-set', 'own')], add: [header('X-Both', 'own')], remove: ['X-Gone'] } };
    expect(withBackendFilters(rule, own).requestHeaders).to.deep.equal({
      set: [header('X-Kept', 'rule'), header('x-set', 'own')],
      add: [header('X-Both', 'rule'), header('X-Both', 'own')],
      remove: ['X-Other', 'X-Gone'],
    });
  });

  it('composes response headers the same way, whichever side sets only some kinds of change', () => {
    const rule: RouteSettings = { responseHeaders: { remove: ['Server'] } };
    const own: RouteSettings = { responseHeaders: { set: [header('Server', 'edge')] } };
    expect(withBackendFilters(rule, own).responseHeaders).to.deep.equal({ set: [header('Server', 'edge')], add: [], remove: [] });
  });

  it("serves the rule's redirect alone: no request reaches a backendRef", () => {
    const rule: RouteSettings = { redirect: { code: 301, scheme: 'https' } };
    const own: RouteSettings = { requestHeaders: { set: [header('X-A', '1')] }, rewrite: { kind: 'prefix', replacement: '/v2' } };
    expect(backendFiltersConflict(rule, own)).to.equal(undefined);
    expect(withBackendFilters(rule, own)).to.equal(rule);
  });

  it("refuses a backendRef's prefix replacement or redirect under its rule's path rewrite, which would act on a path the policy never sees", () => {
    const rule: RouteSettings = { rewrite: { kind: 'prefix', replacement: '/v1' } };
    expect(backendFiltersConflict(rule, { rewrite: { kind: 'prefix', replacement: '/v2' } })).to.equal("a backendRef's URLRewrite ReplacePrefixMatch under its rule's URLRewrite path");
    expect(backendFiltersConflict(rule, { redirect: { code: 302, host: 'elsewhere.example.com' } })).to.equal("a backendRef's RequestRedirect under its rule's URLRewrite path");
    expect(backendFiltersConflict(rule, { rewrite: { kind: 'full', path: '/only' } })).to.equal(undefined);
    expect(backendFiltersConflict({}, { rewrite: { kind: 'prefix', replacement: '/v2' } })).to.equal(undefined);
    expect(backendFiltersConflict({ upstreamHost: 'a.internal' }, { redirect: { code: 302, scheme: 'https' } })).to.equal(undefined);
  });
});
