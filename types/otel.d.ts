import type { InstrumentationBase, InstrumentationConfig } from '@opentelemetry/instrumentation';

/**
 * Spans (a call span, a CLIENT child per attempt, HTTP client semantic conventions) and metrics
 * from the anilink diagnostics channels. Register it like any instrumentation.
 */
export declare class AniLinkInstrumentation extends InstrumentationBase {
  constructor(config?: InstrumentationConfig);
  protected init(): undefined;
  enable(): void;
  disable(): void;
}
