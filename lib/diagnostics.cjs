'use strict';
// Hook isolation and diagnostic routing (transport.md 1.10.3–1.10.4, decisions D28): a hook
// that throws any value, or returns a promise or thenable that rejects, never changes a request
// and never escapes as an uncaught exception or unhandled rejection; the failure goes to
// onHookError, or to console.warn in "warn" mode.

/**
 * Route one diagnostic record.
 * @param {{ source: 'anilink', kind: string, hookName: string, requestId?: string, message: string }} record
 * @param {unknown} rawError the thrown value, when there is one (real failures reach the observer even in "silent" mode)
 * @param {{ onHookError?: Function, diagnostics?: string }} route
 */
function reportDiagnostic(record, rawError, route) {
  const mode = route.diagnostics ?? 'warn';
  if (typeof route.onHookError === 'function' && (rawError !== undefined || mode !== 'silent')) {
    const error = new Error(record.message, { cause: rawError ?? record });
    error.diagnostic = record;
    // The observer itself failing (a throw or a rejection) leaves nothing sensible to tell.
    ignoreFailures(() => route.onHookError(record.hookName, error));
    return;
  }
  if (mode !== 'warn') return;
  try {
    console.warn(JSON.stringify(record));
  } catch {
    // console.warn replaced by one that throws (some test set-ups): nowhere left to report.
  }
}

/** Run `fn`, swallowing what it throws and what the promise or thenable it returns rejects with. */
function ignoreFailures(fn) {
  const ignore = () => {};
  try {
    whenRejected(fn(), ignore);
  } catch {
    // Nothing to report to.
  }
}

/**
 * Call `onRejected(reason)` if `value` is a promise or thenable that rejects, or whose `then`
 * cannot even be read; plain values are left alone.
 */
function whenRejected(value, onRejected) {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return;
  try {
    Promise.resolve(value).then(undefined, onRejected);
  } catch (thrown) {
    // Reading `then` or `constructor` threw (a revoked Proxy, a throwing getter).
    onRejected(thrown);
  }
}

/** A thrown value as text, whatever it is: one `String()` cannot convert gets a description. */
function describeThrown(thrown) {
  try {
    if (thrown instanceof Error) return String(thrown.message);
  } catch {
    // A revoked Proxy throws on instanceof; a getter on `message` may throw.
  }
  try {
    return String(thrown);
  } catch {
    return `a thrown ${thrown === null ? 'null' : typeof thrown} that cannot be converted to a string`;
  }
}

/**
 * Call a hook; a throw, or a rejection of the promise or thenable it returns, becomes a
 * `hook-failure` diagnostic (reported once, later, for a rejection).
 */
function callHook(hookName, hook, args, route) {
  const report = (thrown) => {
    const first = args[0];
    const record = { source: 'anilink', kind: 'hook-failure', hookName };
    if (first && typeof first === 'object' && typeof first.requestId === 'string') record.requestId = first.requestId;
    record.message = `The ${hookName} hook threw and was ignored: ${describeThrown(thrown)}`;
    reportDiagnostic(record, thrown === undefined ? null : thrown, route);
  };
  let returned;
  try {
    returned = hook(...args);
  } catch (thrown) {
    report(thrown);
    return;
  }
  whenRejected(returned, report);
}

module.exports = { reportDiagnostic, callHook, describeThrown };
