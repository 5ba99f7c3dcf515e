'use strict';
// The native addon loader, in one place: every facade module reaches the addon through here.
//
// A clone that ran `npm run build` has the binary in the package root; an installed package
// gets it from this platform's optional dependency `anilink-api-wrapper-<platform>` (the
// napi-rs layout: `npm/<platform>/`, listed in `optionalDependencies` by `napi prepublish`).
// When neither is there, the error names the platform, the package and the fix.
//
// Loading the package only finds the binary (a missing or mismatched one fails there); the
// binary itself is loaded by the first `addon()`, when something needs native work: the first
// client, a token exchange, a ResponseCache, an error class building its message (issue 40,
// start-up: loading it, with the transport's worker thread, is most of what the package cost
// to load). What the facade needs of the binding at load is its contract, generated from the
// Rust declarations into lib/contract.generated.json (src/wire/contract.rs) and read here.

const { existsSync, readFileSync } = require('node:fs');
const { basename, join } = require('node:path');
const { platformName, describeRuntime } = require('./platform.cjs');

// Bundled, this file is no longer lib/native.cjs: an ESM bundle has no `__filename` at all, a
// CommonJS one names the bundle. The package root then means nothing.
const root = typeof __filename === 'string' && basename(__filename) === 'native.cjs' ? join(__dirname, '..') : null;

// The package's manifest (its name, version and binary name). Installed or cloned, read as a
// file: `require` would cost more in module resolution than the read and parse (issue 40,
// start-up). Bundled, required, which bundlers inline.
const pkg = root === null ? require('../package.json') : JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

/** The binding's contract with the facade, read the same way. */
const contract =
  root === null
    ? require('./contract.generated.json')
    : JSON.parse(readFileSync(join(__dirname, 'contract.generated.json'), 'utf8'));

function bindingError(message, cause) {
  const error = new Error(`anilink-api-wrapper: ${message}`, cause ? { cause } : undefined);
  error.code = 'ANILINK_NATIVE_BINDING';
  return error;
}

/** `packageName` is null for a platform without a prebuilt package. */
function missingBinary(name, packageName) {
  const lines = [`no native binary for this platform (${name}: ${describeRuntime()}).`];
  if (root === null) {
    lines.push(
      `This code runs from a bundle (esbuild, webpack, Next.js, …), which did not take along the ` +
        `native binary of ${packageName ?? pkg.name}.`,
      `Fix: leave ${pkg.name} out of the bundle and install it beside it (esbuild ` +
        `--external:${pkg.name}; webpack externals; Next.js serverExternalPackages: ['${pkg.name}']); ` +
        `docs/bundlers.md ("Bundlers and serverless") has each recipe.`,
    );
  } else if (existsSync(join(root, 'Cargo.toml'))) {
    lines.push(
      `This is a source checkout without a build: run \`npm run build\` (needs Rust) to make ` +
        `anilink-api-wrapper.${name}.node.`,
    );
  } else if (packageName) {
    lines.push(
      `Its binary comes in the optional dependency ${packageName}@${pkg.version}, which is not installed.`,
      `Fix: install again without omitting optional dependencies (no --omit=optional / --no-optional), ` +
        `or add it directly: npm install ${packageName}@${pkg.version}. A lockfile made on another ` +
        `platform can also leave it out: delete node_modules and the lockfile, then npm install.`,
    );
  } else {
    const supported = Object.keys(pkg.optionalDependencies ?? {}).map((dep) => dep.slice(pkg.name.length + 1));
    lines.push(
      `No prebuilt binary is published for ${name}${supported.length ? ` (prebuilt: ${supported.join(', ')})` : ''}.`,
      'Fix: build it from source with Rust: clone the repository, run `npm install` there, and ' +
        'install that folder (npm install /path/to/clone).',
    );
  }
  return bindingError(lines.join('\n'));
}

/** The binary `npm run build` leaves in a clone's root, if this is a built clone. */
function builtBinary(name) {
  if (root === null) return null;
  const local = join(root, `${pkg.napi.binaryName}.${name}.node`);
  return existsSync(local) ? local : null;
}

/** A binary that would not load: the dynamic loader's own message, with what usually causes it. */
function unloadable(packageName, cause) {
  const linuxHint =
    process.platform === 'linux'
      ? '\nLinux gnu builds need glibc 2.17 or later; musl systems (Alpine) use the -musl package.'
      : '';
  return bindingError(
    `the native binary in ${packageName} could not be loaded on this platform (${describeRuntime()}): ` +
      `${cause?.message ?? cause}${linuxHint}`,
    cause,
  );
}

/**
 * This platform's package: its manifest (`part` 'manifest') or its binary ('binary'). Each
 * package is required by its literal name, so that file tracers (@vercel/nft, hence Next.js and
 * Vercel) and bundlers see which files the package needs at run time; inside a try block, so
 * that a bundler leaves the packages not installed at build time to run time instead of failing
 * the build. `failed(cause)` makes the error when the require fails. The packaging tests check
 * that these names are exactly the `npm/<platform>/` folders.
 */
function fromPlatformPackage(name, part, failed) {
  try {
    switch (name) {
      case 'darwin-arm64':
        return part === 'manifest'
          ? require('anilink-api-wrapper-darwin-arm64/package.json')
          : require('anilink-api-wrapper-darwin-arm64');
      case 'darwin-x64':
        return part === 'manifest'
          ? require('anilink-api-wrapper-darwin-x64/package.json')
          : require('anilink-api-wrapper-darwin-x64');
      case 'linux-arm-gnueabihf':
        return part === 'manifest'
          ? require('anilink-api-wrapper-linux-arm-gnueabihf/package.json')
          : require('anilink-api-wrapper-linux-arm-gnueabihf');
      case 'linux-arm64-gnu':
        return part === 'manifest'
          ? require('anilink-api-wrapper-linux-arm64-gnu/package.json')
          : require('anilink-api-wrapper-linux-arm64-gnu');
      case 'linux-arm64-musl':
        return part === 'manifest'
          ? require('anilink-api-wrapper-linux-arm64-musl/package.json')
          : require('anilink-api-wrapper-linux-arm64-musl');
      case 'linux-x64-gnu':
        return part === 'manifest'
          ? require('anilink-api-wrapper-linux-x64-gnu/package.json')
          : require('anilink-api-wrapper-linux-x64-gnu');
      case 'linux-x64-musl':
        return part === 'manifest'
          ? require('anilink-api-wrapper-linux-x64-musl/package.json')
          : require('anilink-api-wrapper-linux-x64-musl');
      case 'win32-arm64-msvc':
        return part === 'manifest'
          ? require('anilink-api-wrapper-win32-arm64-msvc/package.json')
          : require('anilink-api-wrapper-win32-arm64-msvc');
      case 'win32-x64-msvc':
        return part === 'manifest'
          ? require('anilink-api-wrapper-win32-x64-msvc/package.json')
          : require('anilink-api-wrapper-win32-x64-msvc');
      default:
        throw missingBinary(name, null);
    }
  } catch (cause) {
    throw cause?.code === 'ANILINK_NATIVE_BINDING' ? cause : failed(cause);
  }
}

/** How to load the binary of this platform's package, once its manifest was found with this version. */
function platformPackageLoader(name) {
  const packageName = `${pkg.name}-${name}`;
  const { version } = fromPlatformPackage(name, 'manifest', () => missingBinary(name, packageName));
  if (version !== pkg.version) {
    throw bindingError(
      `${packageName}@${version} is installed, but this is ${pkg.name}@${pkg.version}: the native ` +
        `binary must be the same version. Fix: npm install ${packageName}@${pkg.version}.`,
    );
  }
  return () => fromPlatformPackage(name, 'binary', (cause) => unloadable(packageName, cause));
}

/** How to load this platform's binary: found now, loaded by the first `addon()`. */
function bindingLoader() {
  const name = platformName();
  const local = builtBinary(name);
  return local ? () => require(local) : platformPackageLoader(name);
}

const loadBinding = bindingLoader();
let binding;

/**
 * The public `ResponseCache`: the addon's class, exported before the addon loads. Constructing
 * one loads the addon and builds the addon's object with this class's prototype, which inherits
 * the addon's methods from then on, so `instanceof`, subclasses and the binding's own check of a
 * `responseCache` option all hold.
 */
class ResponseCache {
  constructor(...options) {
    const NativeCache = addon().ResponseCache;
    try {
      // biome-ignore lint/correctness/noConstructorReturn: the addon's object, with this class's (or a subclass's) prototype
      return Reflect.construct(NativeCache, options, new.target);
    } catch (error) {
      // An option that could not be read is the binding's failure description: a TypeError with the thrown value as cause.
      if (error?.code === contract.typeErrorCode) throw require('./errors.cjs').fromDescription(error);
      throw error;
    }
  }
}

/** The native addon, loaded on the first call (loading this module only found it). */
function addon() {
  if (binding === undefined) {
    binding = loadBinding();
    Object.setPrototypeOf(ResponseCache.prototype, binding.ResponseCache.prototype);
  }
  return binding;
}

module.exports = { addon, contract, ResponseCache };
