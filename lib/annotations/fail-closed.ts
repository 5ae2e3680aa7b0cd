import type { FamilyValues, RuleRead, SettingRule } from './rule.ts';

/**
 * Access control this controller cannot give: a client certificate's subject match,
 * access rules written in snippets, the parts of external authentication
 * it cannot serve (lib/annotations/external-auth.ts). Served without
 * it, a route its owner protected would be open to anyone, so the Ingress
 * is left out and named (fail closed), as a canary is. Each rule says, per
 * annotation present, why it leaves the Ingress out, or why it is ignored
 * when its value asks for no access control.
 */

const OPEN = 'served without it the route would be open to anyone, so this Ingress is left out';

/**
 * A rule over `annotations` (a family's names): `refusal` says why an
 * annotation present leaves its object out, or undefined where it asks for
 * no access control, and it is then ignored with `otherwise`'s reason.
 */
export function failClosedRule(
  setting: string,
  annotations: readonly string[],
  refusal: (name: string, values: FamilyValues) => string | undefined,
  otherwise: (name: string, values: FamilyValues) => string,
): SettingRule {
  return {
    setting,
    annotations,
    read: (values): RuleRead => {
      const leftOut: Record<string, string> = {};
      const ignored: Record<string, string> = {};
      for (const name of annotations) {
        if (values(name) === undefined) continue;
        const why = refusal(name, values);
        if (why === undefined) ignored[name] = otherwise(name, values);
        else leftOut[name] = why;
      }
      return { leftOut, ignored };
    },
  };
}

/**
 * auth-tls-match-cn: ingress-nginx refuses (403) a certificate whose subject
 * does not match its regular expression (internal/ingress/annotations/authtls/main.go).
 * Not served here; the rest of auth-tls-* is (client-certificates.ts).
 */
export const nginxClientCertificates = failClosedRule(
  'unsupported.nginx-client-certificates',
  ['auth-tls-match-cn'],
  (_name, values) =>
    values('auth-tls-secret') === undefined || values('auth-tls-verify-client') === 'off' ? undefined : `matching the client certificate's subject is not supported: ${OPEN}`,
  (_name, values) =>
    values('auth-tls-secret') === undefined
      ? 'auth-tls-secret is not set, so ingress-nginx asks for no client certificate either'
      : 'auth-tls-verify-client is "off": no client certificate is asked for',
);

/** nginx directives that allow or refuse a request (a `return` of 401, 403, 404 or 444 hides a path): a snippet holding one is an access rule. */
const NGINX_ACCESS = /(?:^|[\s;{}])(deny|allow|auth_basic|auth_request|auth_jwt|satisfy|access_by_lua(?:_block|_file)?|return\s+(?:401|403|404|444))[\s;]/;

/** HAProxy actions that refuse a request or ask for credentials. */
const HAPROXY_ACCESS = /(?:^|\s)((?:http|tcp)-request\s+(?:\S+\s+)?(?:deny|auth|reject|tarpit|silent-drop))\b/;

/** `unsupported`: why a snippet is not applied, the whole reason when it holds no access rule. */
function snippetRule(setting: string, annotations: readonly string[], access: RegExp, unsupported: string): SettingRule {
  return failClosedRule(
    setting,
    annotations,
    (name, values) => {
      const rule = access.exec(values(name)!)?.[1];
      return rule === undefined ? undefined : `holds an access rule (${rule.replace(/\s+/g, ' ')}), and ${unsupported}: ${OPEN}`;
    },
    () => unsupported,
  );
}

export const nginxAccessSnippets = snippetRule(
  'unsupported.nginx-snippets',
  ['configuration-snippet', 'server-snippet', 'stream-snippet', 'modsecurity-snippet'],
  NGINX_ACCESS,
  'snippets are not supported: raw configuration from an object could add any directive (and it is nginx configuration, which HAProxy cannot read)',
);

export const haproxyAccessSnippets = snippetRule(
  'unsupported.haproxy-snippets',
  ['backend-config-snippet', 'frontend-config-snippet', 'global-config-snippet', 'stats-config-snippet'],
  HAPROXY_ACCESS,
  'configuration snippets are not supported: raw HAProxy configuration from an object could add any directive',
);
