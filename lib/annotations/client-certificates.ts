import type { FamilyValues, RuleRead, SettingRule } from './rule.ts';
import { isValid, parsePresent } from './rule.ts';
import type { ClientCertificate } from '../routing/settings.ts';
import { ignoreAll } from './shared-rules.ts';
import { parseSecretRef, parseUrl } from './text-values.ts';
import { accept, parseBoolean, parseInteger, refuse, type Parsed } from './values.ts';

/**
 * ingress-nginx's client certificate authentication
 * (internal/ingress/annotations/authtls/main.go): auth-tls-secret names
 * the CA Secret ("namespace/name"), verify-client is on by default, the
 * depth 1, the certificate is passed upstream only when asked.
 */

const VERIFY = ['on', 'optional', 'optional_no_ca', 'off'] as const;

const READ = ['auth-tls-secret', 'auth-tls-verify-client', 'auth-tls-verify-depth', 'auth-tls-error-page', 'auth-tls-pass-certificate-to-upstream'];

type Verify = (typeof VERIFY)[number];

function parseVerify(value: string): Parsed<Verify> {
  const mode = VERIFY.find((known) => known === value);
  return mode === undefined ? refuse('not a verification mode: use "on", "optional", "optional_no_ca" or "off"') : accept(mode);
}

export const nginxClientCertificate: SettingRule = {
  setting: 'route.clientCertificate',
  annotations: READ,
  read: (values: FamilyValues, context): RuleRead => {
    const { values: read, invalid } = parsePresent(values, {
      'auth-tls-secret': (value: string) => parseSecretRef(value, context.namespace ?? ''),
      'auth-tls-verify-client': parseVerify,
      'auth-tls-verify-depth': (value: string) => parseInteger(value, 1, 100),
      'auth-tls-error-page': parseUrl,
      'auth-tls-pass-certificate-to-upstream': parseBoolean,
    });
    if (!isValid(invalid)) return { invalid };
    const ca = read['auth-tls-secret'];
    const others = READ.filter((name) => name !== 'auth-tls-secret');
    if (ca === undefined) return { ignored: ignoreAll(values, others, 'auth-tls-secret is not set, so ingress-nginx asks for no client certificate either') };
    const verify = read['auth-tls-verify-client'] ?? 'on';
    if (verify === 'off') return { ignored: ignoreAll(values, READ, 'auth-tls-verify-client is "off": no client certificate is asked for') };
    const errorPage = read['auth-tls-error-page'];
    const setting: ClientCertificate = {
      ca,
      verify,
      passCertificate: read['auth-tls-pass-certificate-to-upstream'] ?? false,
      ...(errorPage === undefined || verify === 'optional_no_ca' ? {} : { errorPage }),
    };
    const ignored: Record<string, string> = {};
    if (values('auth-tls-verify-depth') !== undefined && read['auth-tls-verify-depth'] !== 1) {
      ignored['auth-tls-verify-depth'] =
        "HAProxy has no verification depth: a certificate is accepted when its chain (the client's intermediates included) reaches a CA of the Secret's ca.crt, at any depth";
    }
    if (errorPage !== undefined && verify === 'optional_no_ca') ignored['auth-tls-error-page'] = 'optional_no_ca refuses no certificate, so no error page is shown';
    return { apply: (into) => (into.route.clientCertificate = setting), ...(Object.keys(ignored).length > 0 ? { ignored } : {}) };
  },
};
