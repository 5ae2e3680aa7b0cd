import type { KubeObject, Problem } from '../pipeline/model.ts';
import type { BackendSettings, CaRef, RouteSettings, ServicePortTls } from '../routing/settings.ts';
import type { HeaderSlot, PolicyLine, SettingRules } from './policy-slots.ts';
import type { RoutePolicy } from './route-policies.ts';
import type { ConditionShape, RouteConditions } from './route-conditions.ts';
import type { TranslatedObject } from '../routing/translated.ts';
import type { Referrers } from './problems.ts';
import type { L4Mode, L4Routing } from '../routing/l4-route.ts';

/**
 * The view model the shipped templates render (built by build-model.ts): HTTP
 * routing by a host map, then an exact-path map and a prefix-path map keyed
 * by host key and path; and what it is built from.
 *
 * Every string in it that came from a Kubernetes object passed a check for
 * where it lands (see names.ts), so no object can add a line, a word, a
 * comment or a directive to the configuration or a map file. Whatever fails
 * a check is left out with a Problem naming the object and field, and the
 * rest is still built: one bad Ingress never takes the others down.
 */

export interface MapModelSources {
  /** Ingress class to serve (default "haproxy"). */
  readonly className: string;
  readonly ingresses: readonly KubeObject[];
  /** An Ingress's translation (lib/ingress/translate-ingress.ts), or undefined for one of another class: it is not served. */
  readonly translate: (ingress: KubeObject) => TranslatedObject | undefined;
  readonly service: (namespace: string, name: string) => KubeObject | undefined;
  /** EndpointSlices labelled kubernetes.io/service-name=<service>. */
  readonly endpointSlices: (namespace: string, service: string) => readonly KubeObject[];
  /** A Secret of any watched Secret resource: TLS Secrets, and the Opaque ones basic auth names. */
  readonly secret: (namespace: string, name: string) => KubeObject | undefined;
  /** A watched ConfigMap: the CA certificates Gateway listeners validate client certificates against. */
  readonly configMap?: (namespace: string, name: string) => KubeObject | undefined;
  /**
   * The stores all of this reads (compared by identity). Versions and change
   * logs are trusted only between builds over the very same stores: fresh
   * stores start at the same versions, and would otherwise pass for unchanged.
   */
  readonly stores?: readonly unknown[];
  /** The Ingress store's version and change log: lets a build read again only the Ingresses that changed. */
  readonly ingressChanges?: IngressChanges;
  /**
   * Versions of the Service, EndpointSlice and Secret stores. When unchanged
   * since the last build with the same cache, the servers and certificates
   * of that build are reused as they are.
   */
  readonly versions?: StoreVersions;
  /**
   * The Services and EndpointSlices changed since the given store versions,
   * or undefined when the stores cannot tell: lets a build resolve only the
   * backends of the Services that changed.
   */
  readonly changedSince?: (versions: StoreVersions) => readonly KubeObject[] | undefined;
  /** The time certificates are checked for expiry at, in milliseconds since the epoch; now by default. */
  readonly now?: number;
  /** The HTTPRoutes routed beside the Ingresses, translated (lib/gateway/translate-http-route.ts). */
  readonly httpRoutes?: readonly TranslatedObject[];
  /** The Gateway API objects and listeners left out, with why: they join the model's excluded. */
  readonly gatewayProblems?: readonly Problem[];
  /**
   * How Service ports are spoken to whoever routes to them (Gateway API
   * BackendTLSPolicies, lib/gateway/backend-tls-policy.ts), by
   * servicePortKey; none when absent.
   */
  readonly servicePortTls?: ReadonlyMap<string, ServicePortTls>;
  /** The certificates HTTPS listeners ask for (lib/gateway/certificates.ts): crt-list lines beside the Ingresses' TLS entries. */
  readonly gatewayCertificates?: readonly ListenerCertificate[];
  /** The TLSRoutes' and TCPRoutes' listeners and routes (lib/gateway/l4-route.ts): the model's layer-4 part. */
  readonly l4?: L4Routing;
  /** Namespaces whose Ingresses may share hosts with one another (`*`: all); otherwise a host is its first claimer's namespace's alone. */
  readonly sharedHostNamespaces?: readonly string[];
}

/** The versions of the stores a build reads beside the Ingresses', by role: -1 for a store not watched. */
export interface StoreVersions {
  readonly services: number;
  readonly endpointSlices: number;
  /** Every watched Secret store's, in the order their lookups go: Secrets matter to certificates and userlists alone. */
  readonly secrets: readonly number[];
  /** The ConfigMap store's: the CA certificates Gateway listeners validate client certificates against. */
  readonly configMaps: number;
}

/** A Secret named by TLS entries, and what they ask of it. */
export interface SecretUse {
  readonly namespace: string;
  readonly name: string;
  /** SNI names of every entry naming it, for hosts their namespace may serve: sorted, deduplicated. */
  readonly hosts: readonly string[];
  /** Hosts its wildcards cover that belong to other namespaces: never to be served with it. Sorted. */
  readonly excludedHosts: readonly string[];
  readonly referrers: Referrers;
  /** Per host of `hosts` whose Ingress or listener asks for client certificates, the CA they are checked against. */
  readonly clientCas?: Readonly<Record<string, ClientCaUse>>;
  /** The fallback certificate's own line (crt-list-lines.ts), and the client certificates its listener asks for. */
  readonly fallback?: boolean;
  readonly fallbackClientCa?: ClientCaUse;
}

/**
 * Client certificates asked for on a crt-list line: checked against `ca`,
 * the handshake refused without a valid one (`required`: a Gateway
 * listener's AllowValidOnly) or not (`optional`: Ingress auth-tls, whose
 * routes refuse, and AllowInsecureFallback).
 */
export interface ClientCaUse {
  readonly ca: CaRef;
  readonly verify: 'optional' | 'required';
}

/** A TLS Secret an HTTPS listener serves, for these SNI names (sorted); `label` and `field` name the listener's certificateRefs entry. */
export interface ListenerCertificate {
  readonly namespace: string;
  readonly name: string;
  readonly hosts: readonly string[];
  readonly label: string;
  readonly field: string;
  /** The certificate for names no crt-list line lists: an HTTPS listener's without a hostname (lib/gateway/certificates.ts). */
  readonly fallback?: boolean;
  /** The listener's client certificate validation (spec.tls.frontend). */
  readonly clientCa?: ClientCaUse;
}

/** One Service port's share of a split backend. */
export interface BackendShare {
  readonly namespace: string;
  readonly service: string;
  readonly port: number;
  readonly weight: number;
}

export interface IngressChanges {
  readonly version: number;
  /** The Ingresses changed since `version`, as they were and as they are; undefined when that is too far back to tell. */
  readonly since: (version: number) => readonly KubeObject[] | undefined;
  /** The Ingress stored now under the namespace and name of this one. */
  readonly current: (ingress: KubeObject) => KubeObject | undefined;
}

/** One lookup of host-suffix.map: the last `labels` labels of a name (suffix-lookups.ts). */
export interface SuffixLookup {
  readonly labels: number;
  /** One entry per label after the first: the template repeats `[.][^.]+` over it. */
  readonly more: readonly number[];
}

export interface MapModel {
  /** host.map lines: every distinct host key, sorted. */
  readonly hosts: readonly HostEntry[];
  /**
   * host-suffix.map lines: the wildcard hosts an HTTPRoute serves, sorted.
   * A Gateway API wildcard covers any number of labels, an Ingress one
   * covers one: names two or more labels below the domain are looked up here.
   */
  readonly suffixHosts: readonly HostEntry[];
  /** The lookups of host-suffix.map, most labels first (suffix-lookups.ts). */
  readonly suffixLookups: readonly SuffixLookup[];
  /** path-exact.map lines, sorted by key. */
  readonly exactRoutes: readonly Route[];
  /** path-prefix.map lines: longest key first (map_beg takes the first match), ties by key. */
  readonly prefixRoutes: readonly Route[];
  /**
   * path-regex.map lines: paths read as regular expressions (nginx's
   * use-regex), keyed "(?i)^<host key, escaped><path>", longest first
   * (map_reg takes the first match), ties by key.
   */
  readonly regexRoutes: readonly Route[];
  /**
   * The condition sets of regex lines with conditions (regex-candidates.ts):
   * while there are any, the regex map is looked up with the keys of those
   * a request passes in front of its host and path.
   */
  readonly regexConditions: readonly RouteConditions[];
  /**
   * candidates.map lines: `<list id>/<shape key>/<values>` → `<rank>=<line value>`,
   * and `<list id>/` → `999=<fallback>`, sorted by key (see route-lists.ts).
   */
  readonly candidates: readonly CandidateLine[];
  /** The header, query parameter and method conditions of the candidates, each once, sorted by key (see route-conditions.ts). */
  readonly conditions: readonly RouteConditions[];
  /** The shapes of those conditions, each once, sorted by key: the frontend looks up one candidate per shape (see route-conditions.ts). */
  readonly conditionShapes: readonly ConditionShape[];
  /** The route policies the served routes use, each once, sorted by key (see route-policies.ts). */
  readonly policies: readonly RoutePolicy[];
  /** The header changes of the policies, one frontend rule each, in the order of their rules (see route-policies.ts). */
  readonly headerSlots: readonly HeaderSlot[];
  /** policies.map lines: `<policy key>/<slot>` → "=" and the value percent-encoded (see route-policies.ts). */
  readonly policyLines: readonly PolicyLine[];
  /** Which settings of one rule each (policy-slots.ts) the policies have: the frontend has their rules while one does. */
  readonly policySettings: SettingRules;
  /** True when a policy sets a server timeout: every backend then applies the one its request's policy set. */
  readonly serverTimeouts: boolean;
  /** True when a policy mirrors requests: the configuration then loads the controller's mirror script and has the mirror frontend. */
  readonly mirrors: boolean;
  /** True when a policy limits request bodies: the configuration then loads the controller's body-limit filter for bodies without a Content-Length. */
  readonly bodyLimits: boolean;
  /** True when a policy asks an auth service first (external authentication): the configuration then loads the controller's external-auth action. */
  readonly externalAuth: boolean;
  /** True when a policy asks an auth Service (Gateway API ExternalAuth): the configuration then has the internal external-auth frontend. */
  readonly authServices: boolean;
  /**
   * The fields of a path map value the frontend reads to choose between
   * backendRefs with filters of their own (see backend-choice.ts), one per
   * share; empty while no served HTTPRoute has such a choice.
   */
  readonly choiceFields: readonly number[];
  /** The userlists of basic auth, one per Secret a policy names, sorted by name (see userlists.ts). */
  readonly userlists: readonly Userlist[];
  /** Sorted by name. */
  readonly backends: readonly Backend[];
  /** Sorted by file; a fallback certificate's line first, lines that refuse names last (crt-list-lines.ts). */
  readonly certificates: readonly Certificate[];
  /** A certificate answers for names no line lists (an HTTPS listener without a hostname): the HTTPS bind goes without strict-sni. */
  readonly fallbackCertificate: boolean;
  /**
   * Some crt-list line asks for client certificates with `verify optional`:
   * the HTTPS bind lets a failed one through (to the routes, which refuse
   * it, or to an AllowInsecureFallback listener's). While none does, a
   * `verify required` line's failed certificate ends the handshake.
   */
  readonly clientCertificates: boolean;
  /**
   * Lines ask for client certificates against two CA files or more: TLS
   * sessions are then never resumed, since a TLS 1.3 session resumed under
   * another SNI name keeps the certificate another CA verified (measured on
   * HAProxy 2.6: ssl_fc_sni is the new name, ssl_c_verify 0; 3.2 does not
   * resume such a session itself, but which HAProxy runs is not known here).
   */
  readonly separateClientCas: boolean;
  /** The CA files backends verify their servers against (general files), sorted by file. */
  readonly caCertificates: readonly CaCertificate[];
  /** Backend of spec.defaultBackend of the oldest served Ingress that has one. */
  readonly defaultBackend: string | undefined;
  /** Objects, or the rules, paths, TLS entries and endpoints in them, left out, with why. */
  readonly excluded: readonly Problem[];
  /** Served but degraded: backends without servers, routes lost to an older Ingress. */
  readonly warnings: readonly Problem[];
  /** Layer-4 routing (TLSRoutes, TCPRoutes): frontends in tcp mode, l4.map, tcp backends (l4-model.ts). */
  readonly l4: L4Model;
}

/**
 * A host.map key (written as "<host> <host>"). Rules without a host use the
 * catch-all key CATCH_ALL_HOST, which is not a wildcard: `wildcard` is true
 * only for '*.domain' keys, which cover exactly one label.
 */
export interface HostEntry {
  readonly host: string;
  readonly wildcard: boolean;
}

/**
 * A path map line: key = host key + path, e.g. "example.com/api/"; its value
 * is the backend, and ":<policy>" when the route has settings.
 */
export interface Route {
  readonly key: string;
  readonly backend: string;
  /** The key of the route's policy (see route-policies.ts); undefined when its Ingress asks for no route setting. */
  readonly policy: string | undefined;
  /** What the route's Ingress asks of it (see lib/routing/settings.ts); undefined with `policy`. */
  readonly settings: RouteSettings | undefined;
}

/** A candidates.map line (see route-lists.ts). */
export interface CandidateLine {
  readonly key: string;
  readonly value: string;
}

/** A basic-auth Secret's users HAProxy can check: `userlist <name>` with a `user <name> password <hash>` line each. */
export interface Userlist {
  /** `auth_<namespace>_<secret>`. */
  readonly name: string;
  /** In name order; `password` is a crypt(3) hash of A-Z a-z 0-9 . / $ _ (written inside {{#escape.quoted}}). */
  readonly users: readonly { readonly name: string; readonly password: string }[];
}

export interface Backend {
  /**
   * `<namespace>_<service>_<port>`: no part can hold '_', so names never
   * collide; one per Service port, however Ingresses name it (backend-names.ts).
   */
  readonly name: string;
  readonly namespace: string;
  readonly service: string;
  /** The Service port's number in decimal; the name an Ingress gives it while the Service has no port of that name. */
  readonly port: string;
  readonly servers: readonly Server[];
  /** What its Ingresses' annotations ask of it: the oldest asking Ingress's (see backend-settings.ts); `{}` when none asks. */
  readonly settings: BackendSettings;
  /** How its server lines speak to the servers (from settings.protocol): undefined for HTTP/1.1 in clear text. */
  readonly transport: Transport | undefined;
  /** The Services whose servers it holds, by weight, when it is split (claim-types.ts BackendRef.split). */
  readonly split?: readonly BackendShare[];
}

/**
 * settings.protocol as server line options, which a template cannot work
 * out from the version's string: h2 over TLS is chosen by ALPN (`alpn h2`),
 * h2 in clear text (h2c, gRPC without TLS) is set by `proto h2`.
 */
export interface Transport {
  readonly ssl: boolean;
  /** `alpn h2`: HTTP/2 over TLS. */
  readonly alpnH2: boolean;
  /** `proto h2`: HTTP/2 in clear text. */
  readonly protoH2: boolean;
  /** With ssl: `verify none` unless a CA verifies the servers. */
  readonly verifyNone: boolean;
  /** With ssl: the CA file servers are verified against (a general file, see CaCertificate). */
  readonly caFile: string | undefined;
  /** With ssl: servers verified against the system's CA bundle (`ca-file @system-ca`). */
  readonly systemCa: boolean;
  readonly sni: string | undefined;
  /** With a CA: the name the servers' certificates must carry (`verifyhost`); HAProxy checks the SNI's without it. */
  readonly verifyHost: string | undefined;
}

export interface Server {
  /** `srv-<address with ':' as '_'>-<port>`, unique within a backend. */
  readonly name: string;
  /** IPv4 or IPv6 (lowercase, no brackets). */
  readonly address: string;
  readonly port: number;
  /** `weight` in decimal, for the servers of a split backend (claim-types.ts BackendRef.split); undefined for HAProxy's default. */
  readonly weight?: string;
}

/**
 * One crt-list line: a certificate and the SNI names it is served for. A
 * Secret with more names than one line of HAProxy's crt-list can hold gets
 * several lines (several entries with the same file and PEM).
 */
export interface Certificate {
  /** `<namespace>_<secret>.pem`, shortened with a hash when that would be too long a file name (see certificateFile). */
  readonly file: string;
  /** The certificate chain then the private key, PEM, re-encoded from the parsed objects. */
  readonly pem: string;
  /** SNI names from every spec.tls[].hosts naming this Secret that its namespace may serve: sorted, deduplicated, lowercase. */
  readonly hosts: readonly string[];
  /** Hosts its wildcards cover that other namespaces hold, written as negative filters (`!host`) on every line. Sorted. */
  readonly excludedHosts: readonly string[];
  /** `<namespace>/<secret>`. */
  readonly secret: string;
  /** The CA file client certificates for these hosts are checked against, if they are asked for, and how (`verify` on the line). */
  readonly clientCaFile?: string;
  readonly clientVerify?: ClientCaUse['verify'];
  /** The line of the certificate for names no line lists: first in the crt-list, HAProxy's default certificate. */
  readonly fallback?: boolean;
  /**
   * A line whose handshakes always fail (`hosts`: names a namespace holds
   * that no certificate of its own lists, beside a fallback certificate):
   * it allows TLS 1.0 alone, which HAProxy's OpenSSL refuses.
   */
  readonly refuses?: boolean;
}

/** A CA Secret's ca.crt, written as a general file (read only at start, so a change reloads). */
export interface CaCertificate {
  /** `<namespace>_<secret>__ca.pem` (see caCertificateFile). */
  readonly file: string;
  readonly pem: string;
}

/** A frontend in tcp mode: `frontend l4_<port>`. */
export interface L4Frontend {
  /** The listener port it binds. */
  readonly port: number;
  /** How its connections are handled (lib/routing/l4-route.ts). */
  readonly mode: L4Mode;
  /** One of the three is true: the template's sections pick the frontend's lines by them. */
  readonly tcp: boolean;
  readonly passthrough: boolean;
  readonly terminate: boolean;
  /** For terminate: the certificate files (under the certificates directory) its bind serves, the first the default. */
  readonly certificates: readonly string[];
}

/** An l4.map line. */
export interface L4Line {
  /** `<port>` (TCP) or `<port>/<SNI name>` (TLS; `*.` and a domain for a wildcard, `*` for any name). */
  readonly key: string;
  /** The backend, or L4_REFUSED (l4-model.ts): the route has no backend that resolves, so its connections are refused. */
  readonly backend: string;
}

export interface L4Model {
  /** By port. */
  readonly frontends: readonly L4Frontend[];
  /** l4.map lines, sorted by key. */
  readonly lines: readonly L4Line[];
  /** The lookups of wildcard SNI names, most labels first (suffix-lookups.ts): `*.` and the name's last labels. */
  readonly sniLookups: readonly SuffixLookup[];
  /** Backends in tcp mode, sorted by name (`l4_` before the HTTP backends' names, which they never equal). */
  readonly backends: readonly Backend[];
  /** The certificate files terminating frontends serve, with their PEM, sorted by file. */
  readonly certificates: readonly { readonly file: string; readonly pem: string }[];
  /** The CA files backends verify their servers against (a BackendTLSPolicy's, after Terminate), sorted by file. */
  readonly caCertificates: readonly CaCertificate[];
  /** Listeners and certificates left out, with why (also in the model's `excluded`). */
  readonly excluded: readonly Problem[];
  /** Routes not served for a port or SNI name an older route holds, backends without servers (also in the model's `warnings`). */
  readonly warnings: readonly Problem[];
}
