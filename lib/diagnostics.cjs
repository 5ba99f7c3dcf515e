'use strict';
// Hook isolation and diagnostic routing (transport.md 1.10.3–1.10.4): a hook that throws never
// changes a request; the failure goes to onHookError, or to console.warn in "warn" mode.

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
    try {
      route.onHookError(record.hookName, error);
    } catch {
      // The observer itself failed: nothing sensible is left to tell.
    }
    return;
  }
  if (mode !== 'warn') return;
  console.warn(JSON.stringify(record));
}

/** Call a hook; a throw becomes a `hook-failure` diagnostic. */
function callHook(hookName, hook, args, route) {
  try {
    hook(...args);
  } catch (thrown) {
    const first = args[0];
    const record = { source: 'anilink', kind: 'hook-failure', hookName };
    if (first && typeof first === 'object' && typeof first.requestId === 'string') record.requestId = first.requestId;
    const text = thrown instanceof Error ? thrown.message : String(thrown);
    record.message = `The ${hookName} hook threw and was ignored: ${text}`;
    reportDiagnostic(record, thrown === undefined ? null : thrown, route);
  }
}

module.exports = { reportDiagnostic, callHook };
