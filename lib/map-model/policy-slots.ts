import type { HeaderAction } from '../routing/settings.ts';
import { compareCodeUnits } from '../compare.ts';

/**
 * Route policies' settings whose rules take their values from policies.map
 * (docs/adr/0025-requests-cost-the-same-with-many-policies.md): header
 * changes as slots, the frontend having one rule per slot in the world, and
 * the settings of one rule each (below), so these are no rules of a policy.
 */

export interface HeaderActions {
  readonly set: readonly HeaderAction[];
  readonly add: readonly HeaderAction[];
  readonly remove: readonly { readonly name: string }[];
}

/**
 * One frontend rule of header changes: `action` ("del", "set", "add") on
 * header `name` of requests or responses, the `nth` (from 1) change of that
 * name in the policy's list, its value (but for "del") looked up by
 * `<policy key>/<slot>`.
 */
export interface HeaderSlot {
  /** `<q (request) or s (response)><d, s or a>/<name>/<nth>`: the policies.map key after the policy key and '/'. */
  readonly slot: string;
  readonly response: boolean;
  readonly action: 'del' | 'set' | 'add';
  /** True for "set" and "add", which write a value. */
  readonly valued: boolean;
  readonly name: string;
  readonly nth: number;
}

/** A policies.map line. */
export interface PolicyLine {
  readonly key: string;
  readonly value: string;
}

/** The slots of a policy's header changes and their values: removals, then sets, then additions, as HAProxy is to apply them. */
export function headerChanges(response: boolean, actions: HeaderActions | undefined): [HeaderSlot, string][] {
  if (!actions) return [];
  const changes: [HeaderSlot, string][] = [];
  const seen = new Map<string, number>();
  const slot = (action: HeaderSlot['action'], name: string): HeaderSlot => {
    const nth = action === 'del' ? 1 : (seen.get(`${action} ${name}`) ?? 0) + 1;
    seen.set(`${action} ${name}`, nth);
    return Object.freeze({ slot: `${response ? 's' : 'q'}${action[0]}/${name}/${nth}`, response, action, valued: action !== 'del', name, nth });
  };
  for (const { name } of actions.remove) if (!seen.has(`del ${name}`)) changes.push([slot('del', name), '']);
  for (const { name, value } of actions.set) changes.push([slot('set', name), value]);
  for (const { name, value } of actions.add) changes.push([slot('add', name), value]);
  return changes;
}

/** Bytes a map value keeps as they are: the rest are percent-encoded (url_dec undoes it; '+' and '?' are not kept, which it would read as a form's). */
const KEPT_BYTE = /^[A-Za-z0-9._~:/@=-]$/;

/**
 * A value as a policies.map line holds it: "=" and the value
 * percent-encoded, so it is one safe word whatever it holds (spaces, '%',
 * '#'), even empty; the frontend drops the "=" (`bytes(1)`) and decodes
 * (`url_dec`).
 */
export function policyValue(value: string): string {
  let encoded = '=';
  for (const byte of Buffer.from(value, 'utf8')) {
    const character = String.fromCharCode(byte);
    encoded += byte < 128 && KEPT_BYTE.test(character) ? character : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return encoded;
}

/** The order of header slots' rules: requests' before responses', removals, sets, additions, each change of a name after the one before it. */
const ACTION_ORDER = { del: 0, set: 1, add: 2 } as const;
export function slotOrder(a: HeaderSlot, b: HeaderSlot): number {
  return Number(a.response) - Number(b.response) || ACTION_ORDER[a.action] - ACTION_ORDER[b.action] || a.nth - b.nth || compareCodeUnits(a.name, b.name);
}

/**
 * The settings rendered as one rule each for every policy, their values
 * policies.map lines `<policy key>/<slot>`: the protocol a route is served
 * over (`o`: "=tls" or "=plain"), the redirect to HTTPS (`r<code>`, a rule
 * per code), the server timeout (`t`, milliseconds, which the backend's
 * `set-timeout` reads as a number), the Host sent upstream (`h`), the
 * forwarded-for headers left out (`f`), X-Forwarded-Prefix (`xp`) and
 * Strict-Transport-Security (`sts`).
 */
export const SETTING_SLOTS = new Set(['servedOver', 'sslRedirect', 'timeouts', 'upstreamHost', 'withoutForwardedFor', 'forwardedPrefix', 'hsts', 'requestHeaders', 'responseHeaders']);

/** What of the settings of one rule each a policy has, for its policies.map lines. */
export interface SettingValues {
  readonly servedOver: { readonly tls: boolean } | undefined;
  readonly sslRedirect: { readonly code: number } | undefined;
  readonly serverTimeout: { readonly milliseconds: number } | undefined;
  readonly upstreamHost: string | undefined;
  readonly withoutForwardedFor: boolean;
  readonly forwardedPrefix: string | undefined;
  readonly hsts: string | undefined;
}

/** The policies.map slots and values of those settings. */
export function settingLines(values: SettingValues): [string, string][] {
  const lines: [string, string][] = [];
  if (values.servedOver) lines.push(['o', values.servedOver.tls ? '=tls' : '=plain']);
  if (values.sslRedirect) lines.push([`r${values.sslRedirect.code}`, '=']);
  if (values.serverTimeout) lines.push(['t', String(values.serverTimeout.milliseconds)]);
  if (values.upstreamHost !== undefined) lines.push(['h', policyValue(values.upstreamHost)]);
  if (values.withoutForwardedFor) lines.push(['f', '=']);
  if (values.forwardedPrefix !== undefined) lines.push(['xp', policyValue(values.forwardedPrefix)]);
  if (values.hsts !== undefined) lines.push(['sts', policyValue(values.hsts)]);
  return lines;
}

/** Which settings of one rule each the policies of the world have: the frontend has their rules while one does. */
export interface SettingRules {
  readonly servedOver: boolean;
  /** The codes of the redirects to HTTPS, ascending: a rule each. */
  readonly sslRedirectCodes: readonly number[];
  readonly upstreamHost: boolean;
  readonly withoutForwardedFor: boolean;
  readonly forwardedPrefix: boolean;
  readonly hsts: boolean;
}

/** The setting rules of `policies`: the same object as `before` while they are the same. */
export function settingRules(policies: readonly SettingValues[], before: SettingRules | undefined): SettingRules {
  const codes = [...new Set(policies.flatMap((policy) => (policy.sslRedirect ? [policy.sslRedirect.code] : [])))].sort((a, b) => a - b);
  const rules: SettingRules = {
    servedOver: policies.some((policy) => policy.servedOver !== undefined),
    sslRedirectCodes: Object.freeze(codes),
    upstreamHost: policies.some((policy) => policy.upstreamHost !== undefined),
    withoutForwardedFor: policies.some((policy) => policy.withoutForwardedFor),
    forwardedPrefix: policies.some((policy) => policy.forwardedPrefix !== undefined),
    hsts: policies.some((policy) => policy.hsts !== undefined),
  };
  const same =
    before !== undefined &&
    before.sslRedirectCodes.length === codes.length &&
    before.sslRedirectCodes.every((code, i) => code === codes[i]) &&
    (['servedOver', 'upstreamHost', 'withoutForwardedFor', 'forwardedPrefix', 'hsts'] as const).every((name) => before[name] === rules[name]);
  return same ? before : Object.freeze(rules);
}
