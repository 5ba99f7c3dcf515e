'use strict';
// What a provider slot reads of the process, read here in JavaScript when the slot is built
// (decisions D38): Bun's `process.env` never reaches the C environment, so a variable set
// inside the program would be invisible to the addon. The addon names the variables it reads
// (the contract's `slotEnvironment`) and decides what each means; this module only hands them
// over, with whether the runtime has libuv, and warns when a slot skips certificate checks
// (D37).

const { addon, contract } = require('./native.cjs');

const VARIABLES = contract.slotEnvironment;

/**
 * Whether this runtime has libuv for the addon to drive calls on the JavaScript thread: Node
 * does; Bun and Deno only stub it (Bun's stub aborts the process), so calls run on the worker.
 */
const hasLibuv = process.versions.bun === undefined && process.versions.deno === undefined;

/** Set once any copy of the package in this process has warned (D37: once per process). */
const WARNED = Symbol.for('anilink-api-wrapper.insecure-tls-warned');

function warnInsecureTls() {
  if (globalThis[WARNED]) return;
  globalThis[WARNED] = true;
  process.emitWarning(
    "Setting the NODE_TLS_REJECT_UNAUTHORIZED environment variable to '0' makes TLS connections " +
      'and HTTPS requests insecure by disabling certificate verification.',
  );
}

/**
 * The native client of one slot, built with the environment as the program sees it now.
 * @param {'anilist' | 'mal' | 'external'} provider
 * @param {object} slot its options and credentials
 * @param {(text: string) => void} onBatch receives its messages
 */
function createNativeClient(provider, slot, onBatch) {
  const variables = {};
  for (const name of VARIABLES) {
    const value = process.env[name];
    if (value !== undefined) variables[name] = value;
  }
  const client = addon().NativeClient.create(provider, slot, { variables, libuv: hasLibuv }, onBatch);
  if (client.skipsCertificateVerification) warnInsecureTls();
  return client;
}

module.exports = { createNativeClient };
