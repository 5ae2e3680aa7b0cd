import type { TracerProvider as ApiTracerProvider } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { AlwaysOffSampler, AlwaysOnSampler, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler, TracerProvider, type Sampler } from '@opentelemetry/sdk-trace';
import { tracingSettings, type SamplerSetting, type TracingSettings } from './tracing-environment.ts';

/**
 * The OpenTelemetry SDK, for the entry point only: everything else uses
 * @opentelemetry/api and is handed the provider. Import this module only
 * when tracingRequested() says so, so a controller without an OTLP endpoint
 * never loads the SDK.
 */

export interface TracingSdk {
  readonly provider: ApiTracerProvider;
  readonly settings: TracingSettings;
  /** Exports every ended span now. */
  forceFlush(): Promise<void>;
  /** Exports what is left and stops. */
  shutdown(): Promise<void>;
}

function samplerFor(setting: SamplerSetting): Sampler {
  switch (setting.type) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(setting.ratio);
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(setting.ratio) });
  }
}

/**
 * A tracer provider exporting OTLP/JSON over HTTP as the process
 * environment says (OTEL_EXPORTER_OTLP_* are read by the exporter too:
 * headers, timeout, compression, certificates), with service.name
 * haproxy-template-ic unless OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES
 * say otherwise. Undefined when the environment asks for no traces.
 */
export function startTracing(serviceVersion: string, env: NodeJS.ProcessEnv = process.env): TracingSdk | undefined {
  const settings = tracingSettings(env);
  if (!settings) return undefined;
  const resource = defaultResource()
    .merge(resourceFromAttributes({ 'service.name': 'haproxy-template-ic', 'service.version': serviceVersion }))
    .merge(detectResources({ detectors: [envDetector] }));
  const provider = new TracerProvider({
    resource,
    sampler: samplerFor(settings.sampler),
    spanLimits: settings.spanLimits,
    spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: settings.url }), ...settings.batch })],
  });
  return {
    provider,
    settings,
    forceFlush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}
