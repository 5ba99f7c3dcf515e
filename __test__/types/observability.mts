// Typing test: the diagnostics channel payloads (from ".") and the OpenTelemetry entry ("./otel").
import diagnosticsChannel from 'node:diagnostics_channel';
import type { AttemptEndMessage, BreakerMessage, CallChannelContext } from 'anilink-api-wrapper';
import { AniLinkInstrumentation } from 'anilink-api-wrapper/otel';
import type { Instrumentation } from '@opentelemetry/instrumentation';

diagnosticsChannel.subscribe('anilink:attempt:end', (message) => {
  const attempt = message as AttemptEndMessage;
  const call: CallChannelContext = attempt.call;
  const outcome: 'success' | 'cached' | 'retry' | 'failure' | 'abandoned' = attempt.outcome;
  const delay: number | undefined = attempt.retryDelayMs;
  void [call.requestId, outcome, delay];
});
diagnosticsChannel.subscribe('anilink:breaker', (message) => {
  const state: 'open' | 'closed' = (message as BreakerMessage).state;
  void state;
});

const instrumentation: Instrumentation = new AniLinkInstrumentation({ enabled: false });
instrumentation.enable();
instrumentation.disable();
