'use strict';
// The public error classes (api.md §5, decisions D16) and the adapter that turns the native
// layer's failure descriptions into them. Real subclasses, so `instanceof` works across every
// entry point (they all load this one module). The codes and messages are the binding's
// (src/wire/contract.rs), read once here: a caller's `new AniLinkApiError(503, …)` says what a
// transport failure says.

const { addon, contract } = require('./native.cjs');

/** How a thrown value is described; its module loads with the first error that needs it. */
const describeThrown = (thrown) => require('./diagnostics.cjs').describeThrown(thrown);

const { errorCodes, typeErrorCode: TYPE_ERROR, messages: MESSAGES } = contract;

/** Every code an AniLinkError can carry. */
const AniLinkErrorCodes = Object.freeze(Object.fromEntries(errorCodes.map(({ key, code }) => [key, code])));

const NETWORK_MESSAGES = {
  [AniLinkErrorCodes.NETWORK]: MESSAGES.network,
  [AniLinkErrorCodes.TIMEOUT]: MESSAGES.timeout,
  [AniLinkErrorCodes.ABORTED]: MESSAGES.aborted,
};

/** A message template of the binding with each `{name}` replaced, by the binding's own rule. */
function fill(template, values) {
  const text = {};
  for (const [name, value] of Object.entries(values)) text[name] = String(value);
  return addon().fillMessage(template, text);
}

function defineReadOnly(target, key, value) {
  Object.defineProperty(target, key, { value, enumerable: true, writable: false, configurable: false });
}

class AniLinkError extends Error {
  /**
   * @param {string} message
   * @param {string} code one of AniLinkErrorCodes
   * @param {unknown} [rawAxiosError] a redacted description of the raw failure (exposeRawAxiosError)
   * @param {{ requestId?: string }} [options]
   */
  constructor(message, code, rawAxiosError, options) {
    super(message, rawAxiosError instanceof Error ? { cause: rawAxiosError } : undefined);
    Object.setPrototypeOf(this, new.target.prototype);
    this.name = new.target.name;
    this.code = code ?? AniLinkErrorCodes.UNKNOWN;
    if (rawAxiosError !== undefined) this.rawAxiosError = rawAxiosError;
    if (options && typeof options.requestId === 'string') defineReadOnly(this, 'requestId', options.requestId);
  }
}

class AniLinkApiError extends AniLinkError {
  /**
   * @param {number} status
   * @param {unknown} data the response body (parsed JSON when it parses)
   * @param {unknown} [rawAxiosError]
   * @param {{ rateLimit?: object, contentType?: string, requestId?: string, code?: string }} [options]
   */
  constructor(status, data, rawAxiosError, options = {}) {
    super(fill(MESSAGES.httpStatus, { status }), options.code ?? AniLinkErrorCodes.API, rawAxiosError, options);
    this.status = status;
    this.data = data;
    if (options.rateLimit !== undefined) this.rateLimit = options.rateLimit;
    if (options.contentType !== undefined) this.contentType = options.contentType;
  }
}

/** The upstream status of an `errors` list by the transport's rule (D29), else 200 (none). */
function envelopeStatus(errors) {
  let text;
  try {
    text = JSON.stringify(errors);
  } catch {
    return 200; // a cycle or a BigInt: no status can be read
  }
  return addon().graphqlErrorsStatus(text) ?? 200;
}

/** An entry's message; anything but a string (which could nest without end) reads generically. */
function entryMessage(entry) {
  const message = entry !== null && typeof entry === 'object' ? entry.message : undefined;
  return typeof message === 'string' ? message : MESSAGES.graphqlEntry;
}

class AniLinkGraphQLError extends AniLinkApiError {
  /**
   * @param {ReadonlyArray<{ message: string, status?: number }>} errors the envelope's `errors`
   * @param {unknown} [data] the envelope's `data` (partial data)
   * @param {unknown} [rawAxiosError]
   * @param {{ rateLimit?: object, contentType?: string, requestId?: string, status?: number }} [options]
   */
  constructor(errors, data, rawAxiosError, options = {}) {
    const list = Array.isArray(errors) ? errors : [];
    super(options.status ?? envelopeStatus(list), data ?? null, rawAxiosError, {
      ...options,
      code: AniLinkErrorCodes.GRAPHQL,
    });
    this.message = fill(MESSAGES.graphql, { messages: list.map(entryMessage).join('; ') });
    this.graphqlErrors = list;
    this.partialData = data ?? null;
  }
}

class AniLinkRestError extends AniLinkApiError {
  constructor(status, data, rawAxiosError, options = {}) {
    super(status, data, rawAxiosError, { ...options, code: AniLinkErrorCodes.REST });
  }
}

class AniLinkNetworkError extends AniLinkError {
  /**
   * @param {string} code NETWORK_ERROR, TIMEOUT_ERROR, ABORTED_ERROR or CIRCUIT_OPEN_ERROR
   * @param {string} [message]
   * @param {unknown} [rawAxiosError]
   * @param {{ timeoutMs?: number, abortedDuringPacing?: boolean, requestId?: string }} [options]
   */
  constructor(code, message, rawAxiosError, options = {}) {
    super(message ?? NETWORK_MESSAGES[code] ?? MESSAGES.network, code, rawAxiosError, options);
    if (options.timeoutMs !== undefined) this.timeoutMs = options.timeoutMs;
    if (options.abortedDuringPacing) this.abortedDuringPacing = true;
  }
}

class AniLinkAuthError extends AniLinkError {
  /** @param {string} [operation] @param {{ requestId?: string }} [options] */
  constructor(operation, options) {
    const message = operation ? fill(MESSAGES.authForOperation, { auth: MESSAGES.auth, operation }) : MESSAGES.auth;
    super(message, AniLinkErrorCodes.AUTH, undefined, options);
  }
}

class AniLinkValidationError extends AniLinkError {
  /** @param {readonly string[]} details @param {{ requestId?: string }} [options] */
  constructor(details, options) {
    const list = Array.isArray(details) ? [...details] : [String(details)];
    super(fill(MESSAGES.validation, { details: list.join('\n') }), AniLinkErrorCodes.VALIDATION, undefined, options);
    this.details = Object.freeze(list);
  }
}

/** A response body as the error's `data`: parsed JSON when it parses, else the text. */
function parseBody(text) {
  if (typeof text !== 'string') return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The redacted raw failure attached with exposeRawAxiosError (decisions D18): no headers, no body sent. */
function rawDescription(description) {
  const raw = new Error(description.reason ?? description.message);
  raw.code = description.code;
  if (description.status !== undefined) raw.status = description.status;
  if (description.contentType !== undefined) raw.contentType = description.contentType;
  raw.request = '[REDACTED]';
  return raw;
}

/** An UNKNOWN_ERROR for a failure the facade itself caught, `thrown` as its reason. */
function unknownFailure(thrown) {
  return fromDescription({
    code: AniLinkErrorCodes.UNKNOWN,
    message: MESSAGES.unknown,
    reason: describeThrown(thrown),
  });
}

/**
 * The body key under which the `/testing` upstream's answer to an unscripted request says what
 * to queue (lib/testing/upstream.cjs); no real API sends it. The text joins the error's message,
 * so a failing test prints what is missing, not only a status.
 */
const TESTING_GUIDANCE_KEY = 'anilinkTestingGuidance';

function withTestingGuidance(error) {
  const { data } = error;
  const guidance = data !== null && typeof data === 'object' ? data[TESTING_GUIDANCE_KEY] : undefined;
  if (typeof guidance === 'string') error.message = `${error.message} ${guidance}`;
  return error;
}

/**
 * Build the public error for a description from the native layer.
 * @param {any} description `{ code, message, status?, body?, rateLimit?, … }`
 * @param {boolean} [exposeRaw]
 */
function fromDescription(description, exposeRaw) {
  if (!description || typeof description !== 'object' || typeof description.code !== 'string') {
    const error = new AniLinkError(MESSAGES.unknown, AniLinkErrorCodes.UNKNOWN);
    let text = description;
    try {
      text = description?.message ?? description;
    } catch {
      // A revoked Proxy: describe the value itself.
    }
    error.reason = describeThrown(text);
    return error;
  }
  const d = description;
  const raw = exposeRaw && d.code !== TYPE_ERROR ? rawDescription(d) : undefined;
  const common = { requestId: d.requestId, rateLimit: d.rateLimit, contentType: d.contentType };
  let error;
  switch (d.code) {
    case TYPE_ERROR:
      return 'cause' in d ? new TypeError(d.message, { cause: d.cause }) : new TypeError(d.message);
    case AniLinkErrorCodes.API:
      error = withTestingGuidance(new AniLinkApiError(d.status, parseBody(d.body), raw, common));
      break;
    case AniLinkErrorCodes.REST:
      error = withTestingGuidance(new AniLinkRestError(d.status, parseBody(d.body), raw, common));
      break;
    case AniLinkErrorCodes.GRAPHQL:
      error = new AniLinkGraphQLError(parseBody(d.graphqlErrors), parseBody(d.graphqlData), raw, {
        ...common,
        status: d.status,
      });
      // The transport's message covers every entry shape (D29), including `errors` that is not a list.
      error.message = d.message;
      break;
    case AniLinkErrorCodes.NETWORK:
    case AniLinkErrorCodes.TIMEOUT:
    case AniLinkErrorCodes.ABORTED:
    case AniLinkErrorCodes.CIRCUIT:
      error = new AniLinkNetworkError(d.code, d.message, raw, {
        requestId: d.requestId,
        timeoutMs: d.timeoutMs,
        abortedDuringPacing: d.abortedDuringPacing,
      });
      break;
    case AniLinkErrorCodes.AUTH:
      error = new AniLinkAuthError(undefined, { requestId: d.requestId });
      error.message = d.message;
      break;
    case AniLinkErrorCodes.VALIDATION:
      error = new AniLinkValidationError(d.details ?? [], { requestId: d.requestId });
      // A getter or Proxy in the variables threw: that value is the cause (D33).
      if ('cause' in d)
        Object.defineProperty(error, 'cause', {
          value: d.cause,
          enumerable: false,
          writable: true,
          configurable: true,
        });
      break;
    default:
      error = new AniLinkError(d.message, AniLinkErrorCodes.UNKNOWN, raw, { requestId: d.requestId });
  }
  if (d.reason !== undefined && !('reason' in error)) {
    Object.defineProperty(error, 'reason', { value: d.reason, enumerable: false, writable: true, configurable: true });
  }
  return error;
}

const ERROR_CLASSES = {
  AniLinkError,
  AniLinkApiError,
  AniLinkGraphQLError,
  AniLinkRestError,
  AniLinkNetworkError,
  AniLinkAuthError,
  AniLinkValidationError,
};
// `error.name` comes from the class name, which bundlers rename (esbuild's ESM output makes
// `AniLinkNetworkError2`) and minifiers shorten: pin each to the name it is exported under.
for (const [name, errorClass] of Object.entries(ERROR_CLASSES))
  Object.defineProperty(errorClass, 'name', { value: name });

module.exports = { AniLinkErrorCodes, ...ERROR_CLASSES, fromDescription, unknownFailure, TESTING_GUIDANCE_KEY };
