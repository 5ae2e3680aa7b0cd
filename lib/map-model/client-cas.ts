import type { CaRef } from '../routing/settings.ts';
import { compareCodeUnits } from '../compare.ts';
import type { KubeObject, Problem } from '../pipeline/model.ts';
import { sourceOf } from '../pipeline/value-source.ts';
import { checkCaConfigMap, checkCaSecret, type CheckedCa } from './certificates.ts';
import { describeObject } from '../object-fields/names.ts';
import { NO_PROBLEMS } from './problems.ts';
import type { RoutePolicy } from './route-policies.ts';
import { caCertificateFile } from './transport.ts';
import type { CaCertificate, ClientCaUse, SecretUse } from './types.ts';

/**
 * The CA files client certificates are checked against: one per Secret (or
 * a Gateway listener's ConfigMap) a route policy's client certificate
 * authentication, or a crt-list line, names. One missing or unusable (no
 * ca.crt, one HAProxy's OpenSSL refuses, a ca.crl this controller does not
 * apply) gets NOBODY's certificate instead, whose key was never kept: every
 * client certificate then fails, so the routes and lines refuse rather than
 * serve without the check (fail closed), and a warning names the Ingress,
 * or the Secret or ConfigMap.
 */

/** A self-signed CA whose private key was discarded when it was made: it verifies no certificate. */
const NOBODY = `-----BEGIN CERTIFICATE-----
MIIB2TCCAX+gAwIBAgIUDcpK4lzlYWoS4Pp5DiyVvPLoUg8wCgYIKoZIzj0EAwIw
QTE/MD0GA1UEAww2aGFwcm94eS10ZW1wbGF0ZS1pYyB1bnVzYWJsZSBjbGllbnQg
Q0EgKG5vIGtleSBleGlzdHMpMCAXDTI2MTEyODA1MzUzNloYDzIxMjYxMTA0MDUz
NTM2WjBBMT8wPQYDVQQDDDZoYXByb3h5LXRlbXBsYXRlLWljIHVudXNhYmxlIGNs
aWVudCBDQSAobm8ga2V5IGV4aXN0cykwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNC
AAQW8nn5cdmiQNCstNw35WBk/PRgD0gpFC07YEKMj/StF2Tj3kUFmh58xcy+cgWn
8XoYHkYtwahSQqlUEf00riXPo1MwUTAdBgNVHQ4EFgQUYI/mfHHAH18KQd78F/2y
F3rvgXYwHwYDVR0jBBgwFoAUYI/mfHHAH18KQd78F/2yF3rvgXYwDwYDVR0TAQH/
BAUwAwEB/zAKBggqhkjOPQQDAgNIADBFAiEA6AvWDQC5k1bRp1Vq9X1d5HS7NXtr
149DEJgUp42BZqcCICoEGr3o2Umj7Wrvj9SZNyPndM7RBikLnNMs6UaZo+vL
-----END CERTIFICATE-----
`;

/**
 * The general file a client CA is written to: apart from the same Secret's
 * file for verifying servers (caCertificateFile), which holds its real
 * ca.crt where this one may hold NOBODY's.
 */
export function clientCaFileOf(ref: CaRef): string {
  return caCertificateFile({ namespace: ref.namespace, name: ref.name }).replace(/__ca\.pem$/, ref.configMap ? '__configmap-client-ca.pem' : '__client-ca.pem');
}

/** Where a CA's object is found: a Secret, or a ConfigMap. */
export interface CaSources {
  readonly secret: (namespace: string, name: string) => KubeObject | undefined;
  readonly configMap?: (namespace: string, name: string) => KubeObject | undefined;
}

export interface ClientCas {
  /** Sorted by file. */
  readonly files: readonly CaCertificate[];
  readonly warnings: readonly Problem[];
}

const NONE: ClientCas = Object.freeze({ files: Object.freeze([]), warnings: NO_PROBLEMS });

const REFUSES = 'its client certificate authentication refuses every certificate';

export function resolveClientCas(policies: readonly RoutePolicy[], uses: readonly SecretUse[], sources: CaSources, cache: WeakMap<KubeObject, CheckedCa>, last: ClientCas = NONE): ClientCas {
  /** Per file, its Secret and the policy asking for it (the first), whose object a warning names. */
  const wanted = new Map<string, { readonly ref: CaRef; readonly policy: RoutePolicy | undefined }>();
  for (const policy of policies) {
    const ref = policy.settings.clientCertificate?.ca;
    if (ref !== undefined && !wanted.has(clientCaFileOf(ref))) wanted.set(clientCaFileOf(ref), { ref, policy });
  }
  for (const use of uses) {
    for (const { ca } of [...Object.values(use.clientCas ?? {}), ...(use.fallbackClientCa ? [use.fallbackClientCa] : [])]) {
      if (!wanted.has(clientCaFileOf(ca))) wanted.set(clientCaFileOf(ca), { ref: ca, policy: undefined });
    }
  }
  if (wanted.size === 0) return NONE;
  const files: CaCertificate[] = [];
  const warnings: Problem[] = [];
  for (const [file, { ref, policy }] of [...wanted].sort(([a], [b]) => compareCodeUnits(a, b))) {
    const label = describeObject(ref.configMap ? 'ConfigMap' : 'Secret', ref.namespace, ref.name);
    const found = ref.configMap ? sources.configMap?.(ref.namespace, ref.name) : sources.secret(ref.namespace, ref.name);
    let why: string | undefined;
    if (!found) why = `${label} not found`;
    else {
      let checked = cache.get(found);
      if (!checked) cache.set(found, (checked = ref.configMap ? checkCaConfigMap(found) : checkCaSecret(found)));
      if (!checked.ok) why = `${label} ${checked.field} ${checked.reason}`;
      else if (hasCrl(found)) why = `${label} holds a ca.crl, and revocation lists are not applied`;
      else files.push(Object.freeze({ file, pem: checked.pem }));
    }
    if (why === undefined) continue;
    files.push(Object.freeze({ file, pem: NOBODY }));
    const asking = policy && sourceOf(policy);
    warnings.push({ object: asking?.label ?? label, field: asking?.field ?? '', message: `${why}: ${REFUSES}` });
  }
  return {
    files: sameFiles(last.files, files) ? last.files : Object.freeze(files),
    warnings: warnings.length === 0 ? NO_PROBLEMS : warnings,
  };
}

function hasCrl(secret: KubeObject): boolean {
  const data = secret['data'];
  return typeof data === 'object' && data !== null && typeof (data as Record<string, unknown>)['ca.crl'] === 'string';
}

function sameFiles(before: readonly CaCertificate[], after: readonly CaCertificate[]): boolean {
  return before.length === after.length && after.every((ca, i) => ca.file === before[i]!.file && ca.pem === before[i]!.pem);
}

/** A crt-list line's client certificate options. */
export interface LineClientCa {
  readonly clientCaFile: string | undefined;
  readonly clientVerify: ClientCaUse['verify'] | undefined;
}

/**
 * The SNI names of a Secret grouped by the CA file their client
 * certificates are checked against and how (none first), each group a
 * crt-list line's options; the fallback line, which lists no name, its
 * listener's.
 */
export function hostsByClientCa(use: Pick<SecretUse, 'hosts' | 'clientCas' | 'fallbackClientCa'>): readonly (LineClientCa & { readonly hosts: readonly string[] })[] {
  const { hosts, clientCas, fallbackClientCa } = use;
  if (hosts.length === 0 && fallbackClientCa) return [{ ...lineOptions(fallbackClientCa), hosts }];
  if (clientCas === undefined) return [{ clientCaFile: undefined, clientVerify: undefined, hosts }];
  const groups = new Map<string, LineClientCa & { readonly hosts: string[] }>([['', { clientCaFile: undefined, clientVerify: undefined, hosts: [] }]]);
  for (const host of hosts) {
    const options = lineOptions(clientCas[host]);
    const key = options.clientCaFile === undefined ? '' : `${options.clientVerify} ${options.clientCaFile}`;
    const group = groups.get(key);
    if (group) group.hosts.push(host);
    else groups.set(key, { ...options, hosts: [host] });
  }
  return [...groups.values()].filter((group) => group.hosts.length > 0);
}

function lineOptions(use: ClientCaUse | undefined): LineClientCa {
  return use === undefined ? { clientCaFile: undefined, clientVerify: undefined } : { clientCaFile: clientCaFileOf(use.ca), clientVerify: use.verify };
}
