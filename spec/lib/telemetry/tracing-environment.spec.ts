import { expect } from 'chai';
import { tracingRequested, tracingSettings } from '../../../lib/telemetry/tracing-environment.ts';

describe('tracing environment', () => {
  it('traces only when an OTLP endpoint is set and nothing switches tracing off', () => {
    expect(tracingRequested({})).to.equal(false);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://jaeger:4318' })).to.equal(true);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://jaeger:4318/v1/traces' })).to.equal(true);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://jaeger:4318', OTEL_SDK_DISABLED: 'true' })).to.equal(false);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://jaeger:4318', OTEL_TRACES_EXPORTER: 'none' })).to.equal(false);
    expect(tracingSettings({})).to.equal(undefined);
  });

  it('posts to the traces endpoint as given, or to the general one under /v1/traces', () => {
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://jaeger:4318/' })?.url).to.equal('http://jaeger:4318/v1/traces');
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector/otlp' })?.url).to.equal('https://collector/otlp/v1/traces');
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://ignored:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://jaeger:4318/custom' })?.url).to.equal(
      'http://jaeger:4318/custom',
    );
  });

  it('reads the sampler, batch and span limit variables with their standard defaults', () => {
    const defaults = tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://jaeger:4318' });
    expect(defaults?.sampler).to.deep.equal({ type: 'parentbased_always_on' });
    expect(defaults?.batch).to.deep.equal({ scheduledDelayMillis: 5000, exportTimeoutMillis: 30_000, maxQueueSize: 2048, maxExportBatchSize: 512 });
    const tuned = tracingSettings({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://jaeger:4318',
      OTEL_TRACES_SAMPLER: 'traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
      OTEL_BSP_SCHEDULE_DELAY: '200',
      OTEL_SPAN_LINK_COUNT_LIMIT: '16',
      OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT: '1024',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
    });
    expect(tuned?.sampler).to.deep.equal({ type: 'traceidratio', ratio: 0.25 });
    expect(tuned?.batch.scheduledDelayMillis).to.equal(200);
    expect(tuned?.spanLimits).to.deep.equal({ attributeValueLengthLimit: 1024, linkCountLimit: 16 });
    expect(tuned?.notes).to.have.length(1);
  });

  it('names the variable at fault', () => {
    const base = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://jaeger:4318' };
    expect(() => tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'jaeger:4318' })).to.throw(/^OTEL_EXPORTER_OTLP_ENDPOINT must be an http:\/\/ or https:\/\/ URL/);
    expect(() => tracingSettings({ ...base, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).to.throw(/^OTEL_EXPORTER_OTLP_PROTOCOL: only OTLP over HTTP/);
    expect(() => tracingSettings({ ...base, OTEL_TRACES_SAMPLER: 'sometimes' })).to.throw(/^OTEL_TRACES_SAMPLER must be one of/);
    expect(() => tracingSettings({ ...base, OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '2' })).to.throw(/^OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1/);
    expect(() => tracingSettings({ ...base, OTEL_BSP_SCHEDULE_DELAY: 'soon' })).to.throw('OTEL_BSP_SCHEDULE_DELAY must be a whole number, got "soon"');
    expect(() => tracingSettings({ ...base, OTEL_BSP_MAX_QUEUE_SIZE: '10', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '20' })).to.throw(/must not exceed OTEL_BSP_MAX_QUEUE_SIZE/);
    expect(() => tracingRequested({ ...base, OTEL_TRACES_EXPORTER: 'zipkin' })).to.throw(/^OTEL_TRACES_EXPORTER: only otlp/);
  });
});
