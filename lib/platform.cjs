'use strict';
// Which napi-rs platform package this process needs: the loader (native.cjs) and the packaging
// tests share this naming, which must match the `npm/<platform>/` folders `napi create-npm-dirs` makes.

const { readFileSync } = require('node:fs');

/** Whether this Linux runs on musl rather than glibc (Alpine and other musl distributions). */
function isMusl() {
  try {
    if (readFileSync('/usr/bin/ldd', 'utf8').includes('musl')) return true;
  } catch {
    // No ldd (a minimal image): ask Node's own report.
  }
  const { header } = process.report.getReport();
  return !header.glibcVersionRuntime;
}

/**
 * The napi-rs platform name (`linux-x64-gnu`, `linux-arm-gnueabihf`, `darwin-arm64`,
 * `win32-x64-msvc`…) of this process, or of the platform given (`libc` is `gnu` or `musl`).
 */
function platformName(
  platform = process.platform,
  arch = process.arch,
  libc = platform === 'linux' && isMusl() ? 'musl' : 'gnu',
) {
  if (platform === 'win32') return `win32-${arch}-msvc`;
  if (platform === 'linux') return `linux-${arch}-${arch === 'arm' ? `${libc}eabihf` : libc}`;
  return `${platform}-${arch}`;
}

/** This runtime, for error messages: `linux x64, glibc 2.36, Node.js v20.20.2`. */
function describeRuntime() {
  let libc = '';
  if (process.platform === 'linux') {
    const glibc = process.report.getReport().header.glibcVersionRuntime;
    libc = glibc ? `, glibc ${glibc}` : ', musl';
  }
  return `${process.platform} ${process.arch}${libc}, Node.js ${process.version}`;
}

module.exports = { platformName, describeRuntime };
