/**
 * Every setting of the controller configuration, declared once: its type,
 * default, limits, meaning and an example. The loader (load.ts and the
 * section readers) takes from here the fields each mapping accepts, the
 * defaults, and the type, range, rule or allowed values of each single
 * value (setting-reader.ts); `npm run docs:reference` writes the reference
 * (docs/reference/configuration.md) and a JSON Schema for editors from it.
 * The readers keep the checks that relate settings to one another (maxWait
 * against debounce, distinct storage directories, relations against
 * indexBy) and their own messages for an empty list or mapping; the
 * descriptions and minItems here state them.
 */
import { checkLabelKey } from '../kube-syntax/label-selector.ts';
import { guardedDirectives } from './guarded-directives.ts';
import { rules, type Rule } from './rules.ts';
import { section, variants } from './schema-types.ts';

const labelKey: Rule = { test: (text) => checkLabelKey(text) === undefined, description: 'a label key such as app.kubernetes.io/name' };

const port = (description: string, fallback: number) => ({ kind: 'integer', min: 1, max: 65_535, default: fallback, description }) as const;

const directory = (what: string, fallback: string) =>
  ({
    kind: 'string',
    rule: rules.directory,
    default: fallback,
    description: `The Data Plane API's storage directory for ${what}, under \`baseDir\`. The three storage directories must differ.`,
  }) as const;

const template = (what: string) => ({ kind: 'template', description: what }) as const;

const templateGroup = (what: string, name: Rule, example: Record<string, string>) =>
  ({
    kind: 'named',
    name,
    item: template(`The template of one ${what}.`),
    default: {},
    description: `${what.charAt(0).toUpperCase()}${what.slice(1)}s by name, each a template.`,
    example,
  }) as const;

/** Which rendered file an assertion reads; validation-tests-reader.ts checks that a template renders it. */
const target = {
  kind: 'string',
  default: 'haproxy.cfg',
  description: 'The rendered file the assertion reads: `haproxy.cfg`, or `<mapsDir>/<file>`, `<certificatesDir>/<file>`, `<generalDir>/<file>` of a file a template renders.',
  example: 'maps/host.map',
} as const;

const pattern = { kind: 'string', description: 'A regular expression (JavaScript syntax), multiline: `^` and `$` anchor at lines.', example: '^\\s*bind :443 ssl' } as const;

export const controllerConfigSchema = section(
  {
    podSelector: section(
      {
        matchLabels: {
          kind: 'named',
          name: labelKey,
          item: { kind: 'string', description: 'A label value (quote numbers and booleans).' },
          default: {},
          description: 'Labels of the HAProxy pods the controller deploys to.',
          example: { 'app.kubernetes.io/name': 'haproxy' },
        },
      },
      { description: 'Which pods are the HAProxy instances.' },
    ),
    dataplane: section(
      {
        port: port("The port of each HAProxy pod's Data Plane API.", 5555),
        scheme: { kind: 'string', values: ['http', 'https'], default: 'http', description: 'How the controller reaches the Data Plane API.' },
        minDeploymentInterval: { kind: 'duration', default: '2s', description: 'The least time between two deployments; the changes in between are deployed together.' },
        driftCheckInterval: {
          kind: 'duration',
          positive: true,
          default: '60s',
          description: 'How often each endpoint is checked for changes made behind the controller, which are then undone.',
        },
        deployTimeout: { kind: 'duration', positive: true, default: '30s', description: 'A deployment to one endpoint that takes longer is abandoned and retried.' },
        maxParallel: {
          kind: 'integer',
          min: 1,
          // A fleet of up to 20 HAProxy pods gets a configuration in one wave: with fewer slots the last
          // pods lag a whole deployment behind the first. Waiting deploys cost a promise each, not a thread.
          default: 20,
          description: 'Deployments running at once, across all endpoints.',
        },
        baseDir: {
          kind: 'string',
          rule: rules.absolutePath,
          default: '/etc/haproxy',
          description: "HAProxy's base directory, as HAProxy and the Data Plane API see it; relative paths in the configuration resolve against it.",
        },
        mapsDir: directory('maps', 'maps'),
        certificatesDir: directory('certificates', 'ssl'),
        generalDir: directory('general files', 'general'),
        configFile: { kind: 'string', rule: rules.absolutePath, defaultText: '`<baseDir>/haproxy.cfg`', description: "HAProxy's configuration file; follows `baseDir` unless given." },
      },
      { description: 'Where HAProxy keeps its files, and how the controller reaches and paces its Data Plane API.' },
    ),
    debounce: { kind: 'duration', default: '500ms', description: 'The quiet period after a change before the configuration is rendered.' },
    maxWait: {
      kind: 'duration',
      default: '5s',
      description: 'The longest a change waits for a render under constant churn; not shorter than `debounce`.',
    },
    leadingEdge: {
      kind: 'boolean',
      default: true,
      description:
        'An idle controller (no render triggered within the last `debounce`, nothing waiting) renders a change at once; changes that follow within `debounce` of a render wait for its quiet period, up to `maxWait`, as one render. `false`: every change waits for the quiet period.',
    },
    runtimeFirst: {
      kind: 'boolean',
      default: true,
      description:
        'A configuration that differs from the last valid one only in what the runtime applies (servers of existing backends, map entries, certificate contents, as the deployment planner decides) is deployed as soon as its `haproxy -c` starts, not when it ends; refused (or never judged), the last valid configuration is deployed again, which undoes it at runtime, and the failure is reported as for any invalid configuration. Behind the Data Plane API, map updates still wait for their verdict. The refused change serves for up to one validation: see [ADR 0022](../adr/0022-runtime-first.md) and [ADR 0026](../adr/0026-runtime-first-by-default.md). `false`: every configuration waits for its verdict.',
    },
    watchedResources: {
      kind: 'named',
      name: rules.identifier,
      minItems: 1,
      required: true,
      description: 'The Kubernetes resources the controller watches, by name: templates read their objects as `resources.<name>`.',
      item: section(
        {
          apiVersion: { kind: 'string', rule: rules.apiVersion, required: true, description: 'The API version of the resource.', example: 'networking.k8s.io/v1' },
          kind: { kind: 'string', rule: rules.kind, description: 'The kind of its objects; `kind` or `resource` is required.', example: 'Ingress' },
          resource: { kind: 'string', rule: rules.resource, defaultText: 'the plural of `kind`', description: 'The plural resource name.', example: 'ingresses' },
          namespace: { kind: 'string', rule: rules.dnsLabel, defaultText: 'every namespace', description: 'Watches one namespace only.', example: 'default' },
          labelSelector: { kind: 'string', description: 'A label selector the API server applies.', example: 'app.kubernetes.io/part-of=shop' },
          fieldSelector: {
            kind: 'string',
            description: 'Requirements `path=value` or `path!=value`, comma-separated, on any field; applied by the controller, not the API server.',
            example: 'type=kubernetes.io/tls',
          },
          indexBy: {
            kind: 'list',
            item: { kind: 'path', description: 'A JSONPath-like key.' },
            minItems: 1,
            default: ['metadata.namespace', 'metadata.name'],
            description: 'The keys the store indexes the objects by; templates and relations look objects up by them, in this order.',
            example: ['metadata.namespace', "metadata.labels['kubernetes.io/service-name']"],
          },
          relations: {
            kind: 'named',
            name: rules.identifier,
            default: {},
            description:
              "Each object gets a property of this name listing the objects of another watched resource whose index keys equal `keys` evaluated on it, looked up lazily through that resource's index. A relation may not be named `apiVersion`, `kind`, `metadata`, `spec` or `status`.",
            item: section(
              {
                resource: { kind: 'string', required: true, description: 'The name of the watched resource the relation lists objects of.', example: 'endpointslices' },
                keys: {
                  kind: 'list',
                  item: { kind: 'path', description: 'A JSONPath-like key.' },
                  minItems: 1,
                  required: true,
                  description: "Paths on this object compared with the target's `indexBy` keys, as many as it has at most.",
                  example: ['metadata.namespace', 'metadata.name'],
                },
              },
              { description: 'One relation.' },
            ),
            example: { endpointSlices: { resource: 'endpointslices', keys: ['metadata.namespace', 'metadata.name'] } },
          },
          validationWebhook: {
            kind: 'boolean',
            default: false,
            description: 'The admission webhook judges creations and updates of its objects (see [Admission webhook](../guides/running-in-a-cluster.md#admission-webhook)).',
          },
          optional: {
            kind: 'boolean',
            default: false,
            description:
              'Watched only where the API server serves it (a CRD that may not be installed); in a cluster, discovery is asked when a configuration is applied, and again every 60 s for a resource it did not serve.',
          },
          fallbackApiVersions: {
            kind: 'list',
            item: { kind: 'string', rule: rules.apiVersion, description: 'Another version of the same group.' },
            default: [],
            description: 'Optional resources only: other versions of the same group, in order, watched when the API server does not serve `apiVersion`; manifests are read at any of them.',
            example: ['gateway.networking.k8s.io/v1beta1'],
          },
        },
        { description: 'One watched resource.' },
      ),
    },
    ignoreFields: {
      kind: 'list',
      item: { kind: 'path', description: 'A JSONPath-like key; not `metadata.name` or `metadata.namespace`, which identify objects.' },
      default: ['metadata.managedFields', "metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']"],
      description: 'Fields dropped from every object before it is stored, so their churn never triggers a render.',
    },
    ingress: section(
      {
        className: {
          kind: 'string',
          rule: rules.dnsSubdomain,
          default: 'haproxy',
          description: 'The Ingress class the routing view (`routes` in templates) serves: Ingresses of another class are not translated.',
        },
        sharedHostNamespaces: {
          kind: 'list',
          item: { kind: 'string', rule: rules.dnsLabel, description: 'A namespace, or `*` alone for every namespace.' },
          default: [],
          description:
            'Namespaces whose Ingresses may share a host with one another (`["*"]`: every namespace). Otherwise a host, its routes and its certificates belong to the namespace of the oldest Ingress claiming it.',
          example: ['shop', 'shop-staging'],
        },
      },
      { description: 'How the Ingress translator reads Ingresses for the routing view of the shipped templates.' },
    ),
    gatewayApi: section(
      {
        controllerName: {
          kind: 'string',
          rule: rules.controllerName,
          default: 'haproxy-template-ic.io/gateway-controller',
          description: 'The `spec.controllerName` of the GatewayClasses whose Gateways, HTTPRoutes and GRPCRoutes this controller reads and writes status to.',
        },
        httpPort: port(
          "The Gateway listener port served by the shipped frontend's HTTP bind: the port clients reach HAProxy on (its Service's, whatever port HAProxy binds in its pod). A listener on another port, or of the other protocol on one of these, is `Accepted=False` with `PortUnavailable` and serves nothing.",
          80,
        ),
        httpsPort: port("The Gateway listener port served by the shipped frontend's HTTPS bind, as `httpPort` for HTTP.", 443),
      },
      { description: 'The Gateway API view model of the shipped templates.' },
    ),
    templates: section(
      {
        haproxyConfig: { ...template("The template of HAProxy's configuration file; not empty."), required: true },
        partials: templateGroup('partial', rules.partial, { backends: '{{#routes.backends}}backend {{name}}\n{{/routes.backends}}' }),
        maps: templateGroup('map file', rules.fileName, { 'host.map': '{{#routes.hosts}}{{name}} {{backend}}\n{{/routes.hosts}}' }),
        files: templateGroup('general file', rules.fileName, { '503.http': 'HTTP/1.0 503 Service Unavailable\r\n\r\n' }),
        certificates: templateGroup('certificate file', rules.fileName, { 'default.pem': '{{templateValues.defaultCertificate}}' }),
      },
      {
        required: true,
        description:
          "The templates the controller renders. A file name has at most one `.`, before its extension, as the Data Plane API stores any other as `_`; none may be the name of one of the controller's own Lua scripts. Every partial a template uses must be defined. In a cluster any template may instead be `{fromSecret: {name, key}}` or `{fromConfigMap: {name, key}}` (see [Running in a cluster](../guides/running-in-a-cluster.md)).",
      },
    ),
    templateValues: { kind: 'mapping', default: {}, description: 'Free values passed to templates as `templateValues` (ports, addresses...).', example: { httpsPort: 443 } },
    validationTests: {
      kind: 'list',
      default: [],
      description: 'Tests every configuration must pass before it is deployed, each rendering its fixtures.',
      item: section(
        {
          name: { kind: 'string', rule: rules.nonEmpty, required: true, description: 'The name of the test, unique among the tests.', example: 'routes the shop' },
          description: { kind: 'string', description: 'What the test shows.' },
          fixtures: {
            kind: 'named',
            name: rules.identifier,
            item: {
              kind: 'list',
              item: { kind: 'mapping', description: 'A Kubernetes object; `metadata.name` required, `apiVersion` and `kind` default to the watched resource.' },
              description: 'The objects.',
            },
            default: {},
            description: 'The objects the test renders, by watched resource name.',
            example: { ingresses: [{ metadata: { name: 'shop', namespace: 'default' }, spec: {} }] },
          },
          assertions: {
            kind: 'list',
            minItems: 1,
            required: true,
            description: 'What must hold of the rendered files.',
            item: variants(
              {
                type: { kind: 'string', required: true, description: 'What the assertion checks.' },
                target,
                pattern: { ...pattern, required: true },
                expected: { kind: 'string', required: true, description: 'The whole content the target must have.' },
                count: { kind: 'integer', min: 0, required: true, description: 'How many matches of `pattern` the target must have.' },
              },
              {
                haproxy_valid: [],
                deterministic: [],
                contains: ['target', 'pattern'],
                not_contains: ['target', 'pattern'],
                equals: ['target', 'expected'],
                match_count: ['target', 'pattern', 'count'],
              },
              {
                description:
                  '`haproxy_valid`: `haproxy -c` accepts the configuration; `deterministic`: two renders are identical; `contains` / `not_contains`: `pattern` matches / does not match `target`; `equals`: `target` is `expected`; `match_count`: `pattern` matches `target` `count` times.',
              },
            ),
          },
        },
        { description: 'One test.' },
      ),
    },
    allowDirectives: {
      kind: 'list',
      item: { kind: 'string', values: Object.keys(guardedDirectives), description: 'A guarded directive.' },
      default: [],
      description:
        'Guarded directives the templates may use: they run code, load native code or read files outside the base directory, so a configuration using one is refused unless it is listed here.',
      example: ['lua-load'],
    },
  },
  { description: 'The controller configuration.' },
);
