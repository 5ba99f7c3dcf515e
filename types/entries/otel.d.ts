// anilink-api-wrapper/otel: an OpenTelemetry instrumentation built on the diagnostics channels.
export * from '../otel';
