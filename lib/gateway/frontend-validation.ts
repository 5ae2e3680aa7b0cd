import { isFields } from '../object-fields/fields.ts';
import { isDnsLabel, isDnsSubdomain, isPortNumber, quote } from '../object-fields/names.ts';
import { absent, type FieldReader } from './field-reader.ts';
import type { GroupKind } from './api.ts';

/**
 * A Gateway's client certificate validation (apis/v1/gateway_types.go
 * FrontendTLSConfig, standard since v1.5): `spec.tls.frontend.default`
 * for every HTTPS listener, `perPort` for those of one port instead. A
 * caCertificateRef of a kind that holds no CA (neither a ConfigMap, the
 * specification's core, nor a Secret) is the listeners' fault
 * (InvalidCACertificateKind), as are the references that do not resolve
 * (listeners.ts); a malformed structure is the Gateway's.
 */

export type ValidationMode = 'AllowValidOnly' | 'AllowInsecureFallback';

export interface CaCertificateRef extends GroupKind {
  readonly namespace: string;
  readonly name: string;
  readonly field: string;
}

export interface ClientValidation {
  /** The references of a kind that can hold a CA, in order. */
  readonly refs: readonly CaCertificateRef[];
  readonly mode: ValidationMode;
  /** The references of other kinds, each named with its field. */
  readonly badKinds: readonly string[];
}

export interface FrontendValidation {
  readonly default: ClientValidation | undefined;
  /** A port's own; undefined when it validates no client certificate. */
  readonly perPort: ReadonlyMap<number, ClientValidation | undefined>;
}

const CA_KINDS = ['ConfigMap', 'Secret'];

function readValidation(reader: FieldReader, value: unknown, field: string, namespace: string): ClientValidation | undefined {
  const tls = reader.fields(value, field);
  const validation = reader.fields(tls?.['validation'], `${field}.validation`);
  if (validation === undefined) return undefined;
  const at = `${field}.validation`;
  const mode = reader.oneOf(validation['mode'], `${at}.mode`, ['AllowValidOnly', 'AllowInsecureFallback'], 'AllowValidOnly');
  const listed = reader.list(validation['caCertificateRefs'], `${at}.caCertificateRefs`);
  if (listed.length === 0) reader.problem(`${at}.caCertificateRefs`, 'lists no CA certificate');
  const refs: CaCertificateRef[] = [];
  const badKinds: string[] = [];
  listed.forEach((entry, index) => {
    const refField = `${at}.caCertificateRefs[${index}]`;
    if (!isFields(entry)) return reader.problem(refField, 'is not an object');
    const group = entry['group'] ?? '';
    const kind = entry['kind'];
    const refNamespace = entry['namespace'] ?? namespace;
    if (!isDnsSubdomain(entry['name']) || !isDnsLabel(refNamespace)) return reader.problem(refField, `${quote(entry['name'])} in ${quote(refNamespace)} is not an object name`);
    if (group !== '' || typeof kind !== 'string' || !CA_KINDS.includes(kind)) {
      badKinds.push(`${refField}: ${quote(kind)} in group ${quote(group)} holds no CA certificate (a ConfigMap or a Secret with ca.crt does)`);
      return;
    }
    refs.push({ group: '', kind, namespace: refNamespace, name: entry['name'], field: refField });
  });
  return mode === undefined ? undefined : { refs, mode, badKinds };
}

export function readFrontendValidation(reader: FieldReader, value: unknown, namespace: string): FrontendValidation {
  const tls = reader.fields(value, 'spec.tls');
  const frontend = reader.fields(tls?.['frontend'], 'spec.tls.frontend');
  const perPort = new Map<number, ClientValidation | undefined>();
  if (frontend === undefined) return { default: undefined, perPort };
  if (absent(frontend['default'])) reader.problem('spec.tls.frontend.default', 'is missing');
  const fallback = readValidation(reader, frontend['default'], 'spec.tls.frontend.default', namespace);
  reader.list(frontend['perPort'], 'spec.tls.frontend.perPort').forEach((entry, index) => {
    const at = `spec.tls.frontend.perPort[${index}]`;
    if (!isFields(entry)) return reader.problem(at, 'is not an object');
    const port = entry['port'];
    if (!isPortNumber(port)) return reader.problem(`${at}.port`, `${quote(port)} is not a port number (1-65535)`);
    if (perPort.has(port)) return reader.problem(`${at}.port`, `${port} is given twice`);
    // A port's configuration without validation overrides the default with none.
    perPort.set(port, readValidation(reader, entry['tls'], `${at}.tls`, namespace));
  });
  return { default: fallback, perPort };
}
