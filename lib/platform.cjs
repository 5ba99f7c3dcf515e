'use strict';
// Which napi-rs platform package this process needs: the loader (native.cjs) and the packaging
// tests share this naming, which must match the `npm/<platform>/` folders `napi create-npm-dirs` makes.

const { readFileSync } = require('node:fs');

/** `gnu` or `musl`: the C library of this Linux. */
function linuxLibc() {
  // ldd is a script of glibc's or a link to musl's loader: reading it is far cheaper than
  // building Node's diagnostic report (some 7 ms), so the report is only the last resort. Read
  // as UTF-8, Node's fast path for a whole file (other encodings cost some 0.5 ms more at
  // start-up); the markers are ASCII, which any decoding keeps.
  let ldd = '';
  try {
    ldd = readFileSync('/usr/bin/ldd', 'utf8');
  } catch {
    // No ldd (a minimal image).
  }
  if (ldd.includes('musl')) return 'musl';
  if (ldd.includes('GNU C Library') || ldd.includes('GLIBC')) return 'gnu';
  return process.report.getReport().header.glibcVersionRuntime ? 'gnu' : 'musl';
}

/**
 * The napi-rs platform name (`linux-x64-gnu`, `linux-arm-gnueabihf`, `darwin-arm64`,
 * `win32-x64-msvc`…) of this process, or of the platform given (`libc` is `gnu` or `musl`).
 */
function platformName(
  platform = process.platform,
  arch = process.arch,
  libc = platform === 'linux' ? linuxLibc() : 'gnu',
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
