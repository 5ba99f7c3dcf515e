/** Checks for the arguments of the scripting API: a bad value throws instead of being coerced. */

export function requireInteger(name, value, min, max = Number.MAX_SAFE_INTEGER) {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new TypeError(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
  }
}

/** A duration in milliseconds; `allowZero` says whether 0 is meaningful (it ends a script). */
export function requireDuration(name, value, { allowZero = true } = {}) {
  const valid = typeof value === 'number' && Number.isFinite(value) && (allowZero ? value >= 0 : value > 0);
  if (!valid) {
    throw new TypeError(`${name} must be a finite number ${allowZero ? '>=' : '>'} 0, got ${JSON.stringify(value)}`);
  }
}
