import type { AniLinkErrorCode, RateLimitInfo } from './transport';

export declare const AniLinkErrorCodes: {
  readonly API: 'API_ERROR';
  readonly GRAPHQL: 'GRAPHQL_ERROR';
  readonly REST: 'REST_ERROR';
  readonly NETWORK: 'NETWORK_ERROR';
  readonly TIMEOUT: 'TIMEOUT_ERROR';
  readonly ABORTED: 'ABORTED_ERROR';
  readonly CIRCUIT: 'CIRCUIT_OPEN_ERROR';
  readonly AUTH: 'AUTH_ERROR';
  readonly VALIDATION: 'VALIDATION_ERROR';
  readonly UNKNOWN: 'UNKNOWN_ERROR';
};

export declare class AniLinkError extends Error {
  constructor(message: string, code: AniLinkErrorCode, rawAxiosError?: unknown, options?: { requestId?: string });
  readonly code: AniLinkErrorCode;
  /** Set on every error that went through the transport; equals the hooks' requestId. */
  readonly requestId?: string;
  /** With exposeRawAxiosError: a redacted description of the raw failure. */
  rawAxiosError?: unknown;
  /** Socket-level description of a network failure (non-enumerable; never secrets). */
  reason?: string;
}

export interface ApiErrorOptions {
  rateLimit?: RateLimitInfo;
  contentType?: string;
  requestId?: string;
}

export declare class AniLinkApiError extends AniLinkError {
  constructor(status: number, data: unknown, rawAxiosError?: unknown, options?: ApiErrorOptions);
  readonly status: number;
  /** The response body: parsed JSON when it parses, else its text. */
  readonly data: unknown;
  readonly rateLimit?: RateLimitInfo;
  readonly contentType?: string;
}

export interface GraphQLErrorEntry {
  message: string;
  status?: number;
  locations?: { line: number; column: number }[];
  path?: (string | number)[];
  extensions?: Record<string, unknown>;
  [key: string]: unknown;
}

export declare class AniLinkGraphQLError extends AniLinkApiError {
  constructor(
    errors: readonly GraphQLErrorEntry[],
    data?: unknown,
    rawAxiosError?: unknown,
    options?: ApiErrorOptions & { status?: number },
  );
  readonly graphqlErrors: readonly GraphQLErrorEntry[];
  readonly partialData: unknown;
}

export declare class AniLinkRestError extends AniLinkApiError {
  constructor(status: number, data: unknown, rawAxiosError?: unknown, options?: ApiErrorOptions);
}

export declare class AniLinkNetworkError extends AniLinkError {
  constructor(
    code: 'NETWORK_ERROR' | 'TIMEOUT_ERROR' | 'ABORTED_ERROR' | 'CIRCUIT_OPEN_ERROR',
    message?: string,
    rawAxiosError?: unknown,
    options?: { timeoutMs?: number; abortedDuringPacing?: boolean; requestId?: string },
  );
  readonly timeoutMs?: number;
  readonly abortedDuringPacing?: true;
}

export declare class AniLinkAuthError extends AniLinkError {
  constructor(operation?: string, options?: { requestId?: string });
}

export declare class AniLinkValidationError extends AniLinkError {
  constructor(details: readonly string[], options?: { requestId?: string });
  readonly details: readonly string[];
}
