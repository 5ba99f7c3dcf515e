// The OpenTelemetry entry (issue 39; docs/hooks-and-diagnostics.md, "Observability"): a call is one span with a CLIENT
// child per attempt (HTTP client semantic conventions), and the metrics count what happened;
// exported with the SDK's in-memory exporters.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { SpanKind } from '@opentelemetry/api';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { AniLinkInstrumentation } from 'anilink-api-wrapper/otel';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientFor, useTestServer } from './support/helpers';
import { graphqlData, type TestServer } from './support/test-server';

let server: TestServer;
useTestServer((started) => {
  server = started;
});

const TOKEN = 'otel-secret-token';
const spans = new InMemorySpanExporter();
const metrics = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
const reader = new PeriodicExportingMetricReader({ exporter: metrics, exportIntervalMillis: 60_000 });
const instrumentation = new AniLinkInstrumentation({ enabled: false });

beforeAll(() => {
  instrumentation.setTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }));
  instrumentation.setMeterProvider(new MeterProvider({ readers: [reader] }));
  instrumentation.enable();
});
afterAll(() => instrumentation.disable());

/** The exported metric points by instrument name. */
async function exportedMetrics() {
  await reader.forceFlush();
  const exported = metrics.getMetrics().at(-1);
  const byName = new Map<string, { value: unknown; attributes: Record<string, unknown> }[]>();
  for (const scope of exported?.scopeMetrics ?? []) {
    for (const metric of scope.metrics) {
      byName.set(
        metric.descriptor.name,
        metric.dataPoints.map(({ value, attributes }) => ({ value, attributes })),
      );
    }
  }
  return byName;
}

describe('AniLinkInstrumentation', () => {
  it('is the same class from require and import, in a Node process', async () => {
    const script =
      "const { AniLinkInstrumentation } = require('anilink-api-wrapper/otel');" +
      "import('anilink-api-wrapper/otel').then((esm) => console.log(esm.AniLinkInstrumentation === AniLinkInstrumentation));";
    const { stdout } = await promisify(execFile)(process.execPath, ['-e', script], {
      cwd: join(__dirname, '..'),
      timeout: 15_000,
    });
    expect(stdout.trim()).toBe('true');
  });

  it('exports a 503-then-200 call as one span with two attempt spans, and its metrics', async () => {
    server.enqueue({ status: 503, body: 'down' }, { body: graphqlData('Media', { id: 1 }) });
    const aniLink = clientFor(server, { authToken: TOKEN, retry: { baseDelayMs: 1, jitter: false } });

    await aniLink.anilist.query.media({ id: 1 });

    const finished = spans.getFinishedSpans();
    const call = finished.find((span) => span.name === 'anilink query.media');
    expect(call).toBeDefined();
    expect(call?.attributes).toMatchObject({
      'anilink.provider': 'anilist',
      'http.request.method': 'POST',
      'http.response.status_code': 200,
      'anilink.attempts': 2,
      'anilink.retries': 1,
    });
    const attempts = finished.filter((span) => span.parentSpanContext?.spanId === call?.spanContext().spanId);
    expect(attempts.map((span) => [span.kind, span.name, span.attributes['http.response.status_code']])).toEqual([
      [SpanKind.CLIENT, 'POST', 503],
      [SpanKind.CLIENT, 'POST', 200],
    ]);
    const url = new URL(server.url);
    expect(attempts[0].attributes).toMatchObject({
      'server.address': url.hostname,
      'server.port': Number(url.port),
      'url.full': server.url,
      'error.type': '503',
    });
    expect(attempts[0].attributes['http.request.resend_count']).toBeUndefined();
    expect(attempts[1].attributes['http.request.resend_count']).toBe(1);
    expect(attempts[1].attributes['error.type']).toBeUndefined();
    expect(JSON.stringify(finished.map((span) => span.attributes))).not.toContain(TOKEN);

    const points = await exportedMetrics();
    expect(points.get('anilink.client.requests')).toEqual([
      expect.objectContaining({ value: 1, attributes: expect.objectContaining({ 'http.response.status_code': 200 }) }),
    ]);
    expect(points.get('anilink.client.retries')?.[0].value).toBe(1);
    const durations = points.get('http.client.request.duration') ?? [];
    expect(durations.map(({ value }) => (value as { count: number }).count).reduce((a, b) => a + b, 0)).toBe(2);
  });

  it('counts 429 answers and marks a failed call span with its error type', async () => {
    server.enqueue({ status: 429, body: 'slow down' });
    const aniLink = clientFor(server, { retry: false });

    await expect(aniLink.anilist.query.media({ id: 2 })).rejects.toThrow();

    const call = spans.getFinishedSpans().findLast((span) => span.name === 'anilink query.media');
    expect(call?.attributes['error.type']).toBe('API_ERROR');
    expect((await exportedMetrics()).get('anilink.client.rate_limited')?.[0].value).toBe(1);
  });
});
