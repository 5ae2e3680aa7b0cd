import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

/**
 * An OTLP/HTTP trace receiver for specs: a real HTTP server taking what an
 * OTLP exporter posts to /v1/traces as JSON (ExportTraceServiceRequest,
 * ids in hex, times as decimal nanosecond strings), decoding every span.
 * Protobuf is refused with 415, so a spec cannot pass on spans it never read.
 */

export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | undefined;
  readonly name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  readonly kind: number;
  readonly startMs: number;
  readonly endMs: number;
  readonly attributes: Readonly<Record<string, unknown>>;
  readonly events: readonly { readonly name: string; readonly timeMs: number; readonly attributes: Readonly<Record<string, unknown>> }[];
  readonly links: readonly { readonly traceId: string; readonly spanId: string; readonly attributes: Readonly<Record<string, unknown>> }[];
  /** OTLP StatusCode: 0 unset, 1 ok, 2 error. */
  readonly status: { readonly code: number; readonly message: string | undefined };
  readonly resource: Readonly<Record<string, unknown>>;
}

interface AnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
  arrayValue?: { values?: AnyValue[] };
  kvlistValue?: { values?: KeyValue[] };
  bytesValue?: string;
}
interface KeyValue {
  key: string;
  value?: AnyValue;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind?: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes?: KeyValue[];
  events?: { name: string; timeUnixNano: string; attributes?: KeyValue[] }[];
  links?: { traceId: string; spanId: string; attributes?: KeyValue[] }[];
  status?: { code?: number; message?: string };
}
interface ExportRequest {
  resourceSpans?: { resource?: { attributes?: KeyValue[] }; scopeSpans?: { spans?: OtlpSpan[] }[] }[];
}

function value(v: AnyValue | undefined): unknown {
  if (!v) return undefined;
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(value);
  if (v.kvlistValue) return attributes(v.kvlistValue.values);
  return v.bytesValue;
}

function attributes(list: KeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key, value(kv.value)]));
}

const millis = (nanos: string) => Number(BigInt(nanos) / 1000n) / 1000;
const hexId = (id: string, bytes: number) => {
  if (!new RegExp(`^[0-9a-f]{${bytes * 2}}$`).test(id)) throw new Error(`not a ${bytes}-byte hex id: ${JSON.stringify(id)}`);
  return id;
};

function decode(request: ExportRequest): ReceivedSpan[] {
  return (request.resourceSpans ?? []).flatMap((resourceSpans) => {
    const resource = attributes(resourceSpans.resource?.attributes);
    return (resourceSpans.scopeSpans ?? []).flatMap((scope) =>
      (scope.spans ?? []).map((span): ReceivedSpan => ({
        traceId: hexId(span.traceId, 16),
        spanId: hexId(span.spanId, 8),
        parentSpanId: span.parentSpanId ? hexId(span.parentSpanId, 8) : undefined,
        name: span.name,
        kind: span.kind ?? 0,
        startMs: millis(span.startTimeUnixNano),
        endMs: millis(span.endTimeUnixNano),
        attributes: attributes(span.attributes),
        events: (span.events ?? []).map((event) => ({ name: event.name, timeMs: millis(event.timeUnixNano), attributes: attributes(event.attributes) })),
        links: (span.links ?? []).map((link) => ({ traceId: hexId(link.traceId, 16), spanId: hexId(link.spanId, 8), attributes: attributes(link.attributes) })),
        status: { code: span.status?.code ?? 0, message: span.status?.message },
        resource,
      })),
    );
  });
}

export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  /** Every request body as received (decompressed), for specs that search the raw export. */
  readonly bodies: string[] = [];
  readonly #server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.method !== 'POST' || request.url !== '/v1/traces') return void response.writeHead(404).end();
      if (!request.headers['content-type']?.startsWith('application/json')) return void response.writeHead(415).end();
      try {
        const raw = Buffer.concat(chunks);
        const body = (request.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString('utf8');
        const spans = decode(JSON.parse(body) as ExportRequest);
        this.bodies.push(body);
        this.spans.push(...spans);
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      } catch (error) {
        response.writeHead(400, { 'content-type': 'text/plain' }).end(String(error));
      }
    });
  });

  private constructor() {}

  static async start(): Promise<OtlpReceiver> {
    const receiver = new OtlpReceiver();
    await new Promise<void>((resolve, reject) => {
      receiver.#server.once('error', reject);
      receiver.#server.listen(0, '127.0.0.1', () => resolve());
    });
    return receiver;
  }

  /** The base URL, as OTEL_EXPORTER_OTLP_ENDPOINT takes it. */
  get endpoint(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  /** Spans received so far, grouped by trace. */
  traces(): Map<string, ReceivedSpan[]> {
    const traces = new Map<string, ReceivedSpan[]>();
    for (const span of this.spans) traces.set(span.traceId, [...(traces.get(span.traceId) ?? []), span]);
    return traces;
  }

  clear(): void {
    this.spans.length = 0;
    this.bodies.length = 0;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => {
      this.#server.close(() => resolve());
      this.#server.closeAllConnections();
    });
  }
}
