/**
 * The standard OpenTelemetry environment variables for traces, read and
 * checked before any SDK module is loaded: tracing costs nothing unless an
 * OTLP endpoint is set. Bad values are errors naming the variable.
 */

type Environment = Readonly<Record<string, string | undefined>>;

export type SamplerSetting =
  | { readonly type: 'always_on' | 'always_off' | 'parentbased_always_on' | 'parentbased_always_off' }
  | { readonly type: 'traceidratio' | 'parentbased_traceidratio'; readonly ratio: number };

export interface TracingSettings {
  /** Where spans are posted: the traces endpoint as given, or the general endpoint + `/v1/traces`. */
  readonly url: string;
  readonly sampler: SamplerSetting;
  readonly batch: {
    readonly scheduledDelayMillis: number;
    readonly exportTimeoutMillis: number;
    readonly maxQueueSize: number;
    readonly maxExportBatchSize: number;
  };
  readonly spanLimits: {
    readonly attributeValueLengthLimit?: number;
    readonly attributeCountLimit?: number;
    readonly eventCountLimit?: number;
    readonly linkCountLimit?: number;
  };
  /** Things worth telling the user that do not stop tracing. */
  readonly notes: readonly string[];
}

const value = (env: Environment, name: string) => {
  const raw = env[name]?.trim();
  return raw === undefined || raw === '' ? undefined : raw;
};

function integer(env: Environment, name: string, fallback: number): number;
function integer(env: Environment, name: string, fallback?: number): number | undefined;
function integer(env: Environment, name: string, fallback?: number): number | undefined {
  const raw = value(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new Error(`${name} must be a whole number, got ${JSON.stringify(raw)}`);
  return Number(raw);
}

function endpoint(env: Environment): string | undefined {
  const specific = value(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const general = value(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  const [name, url] = specific !== undefined ? ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', specific] : ['OTEL_EXPORTER_OTLP_ENDPOINT', general];
  if (url === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`${name} must be an http:// or https:// URL, got ${JSON.stringify(url)}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error(`${name} must be an http:// or https:// URL, got ${JSON.stringify(url)}`);
  if (specific !== undefined) return parsed.href;
  return `${url.replace(/\/+$/, '')}/v1/traces`;
}

function sampler(env: Environment): SamplerSetting {
  const type = value(env, 'OTEL_TRACES_SAMPLER') ?? 'parentbased_always_on';
  switch (type) {
    case 'always_on':
    case 'always_off':
    case 'parentbased_always_on':
    case 'parentbased_always_off':
      return { type };
    case 'traceidratio':
    case 'parentbased_traceidratio': {
      const arg = value(env, 'OTEL_TRACES_SAMPLER_ARG') ?? '1';
      const ratio = Number(arg);
      if (!(ratio >= 0 && ratio <= 1)) throw new Error(`OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1 for ${type}, got ${JSON.stringify(arg)}`);
      return { type, ratio };
    }
    default:
      throw new Error(
        `OTEL_TRACES_SAMPLER must be one of always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio; got ${JSON.stringify(type)}`,
      );
  }
}

/** True when the environment asks for traces: an OTLP endpoint is set and neither the SDK nor the exporter is switched off. */
export function tracingRequested(env: Environment): boolean {
  if (value(env, 'OTEL_SDK_DISABLED')?.toLowerCase() === 'true') return false;
  const exporters = (value(env, 'OTEL_TRACES_EXPORTER') ?? 'otlp').split(',').map((e) => e.trim());
  if (exporters.includes('none')) return false;
  const unsupported = exporters.filter((e) => e !== 'otlp');
  if (unsupported.length > 0) throw new Error(`OTEL_TRACES_EXPORTER: only otlp (OTLP over HTTP) and none are supported, got ${JSON.stringify(unsupported.join(','))}`);
  return value(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT') !== undefined || value(env, 'OTEL_EXPORTER_OTLP_ENDPOINT') !== undefined;
}

/** Everything tracing needs from the environment; undefined when tracing is not requested. */
export function tracingSettings(env: Environment): TracingSettings | undefined {
  if (!tracingRequested(env)) return undefined;
  const url = endpoint(env)!;
  const notes: string[] = [];
  for (const name of ['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'OTEL_EXPORTER_OTLP_PROTOCOL']) {
    const protocol = value(env, name);
    if (protocol === undefined || protocol === 'http/json') continue;
    if (protocol === 'http/protobuf') {
      notes.push(`${name}=http/protobuf: spans are sent as OTLP/JSON, which every OTLP/HTTP receiver accepts on the same endpoint`);
      continue;
    }
    throw new Error(`${name}: only OTLP over HTTP is supported (http/json, or http/protobuf sent as JSON), got ${JSON.stringify(protocol)}`);
  }
  const maxQueueSize = integer(env, 'OTEL_BSP_MAX_QUEUE_SIZE', 2048);
  const maxExportBatchSize = integer(env, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE', Math.min(512, maxQueueSize));
  if (maxExportBatchSize > maxQueueSize) {
    throw new Error(`OTEL_BSP_MAX_EXPORT_BATCH_SIZE (${maxExportBatchSize}) must not exceed OTEL_BSP_MAX_QUEUE_SIZE (${maxQueueSize})`);
  }
  const limit = (specific: string, general?: string) => integer(env, specific) ?? (general ? integer(env, general) : undefined);
  const spanLimits = Object.fromEntries(
    Object.entries({
      attributeValueLengthLimit: limit('OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT', 'OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT'),
      attributeCountLimit: limit('OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT', 'OTEL_ATTRIBUTE_COUNT_LIMIT'),
      eventCountLimit: limit('OTEL_SPAN_EVENT_COUNT_LIMIT'),
      linkCountLimit: limit('OTEL_SPAN_LINK_COUNT_LIMIT'),
    }).filter(([, limitValue]) => limitValue !== undefined),
  );
  return {
    url,
    sampler: sampler(env),
    batch: {
      scheduledDelayMillis: integer(env, 'OTEL_BSP_SCHEDULE_DELAY', 5000),
      exportTimeoutMillis: integer(env, 'OTEL_BSP_EXPORT_TIMEOUT', 30_000),
      maxQueueSize,
      maxExportBatchSize,
    },
    spanLimits,
    notes,
  };
}
