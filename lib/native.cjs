'use strict';
// The native addon loader, in one place: every facade module reaches the addon through here.
//
// A clone that ran `npm run build` has the binary in the package root; an installed package
// gets it from this platform's optional dependency `anilink-api-wrapper-<platform>` (the
// napi-rs layout: `npm/<platform>/`, listed in `optionalDependencies` by `napi prepublish`).
// When neither is there, the error names the platform, the package and the fix.

const { existsSync } = require('node:fs');
const { join } = require('node:path');
const pkg = require('../package.json');
const { platformName, describeRuntime } = require('./platform.cjs');

const root = join(__dirname, '..');

function bindingError(message, cause) {
  const error = new Error(`anilink-api-wrapper: ${message}`, cause ? { cause } : undefined);
  error.code = 'ANILINK_NATIVE_BINDING';
  return error;
}

function missingBinary(name, packageName) {
  const shipped = Object.keys(pkg.optionalDependencies ?? {});
  const builtHere = existsSync(join(root, 'Cargo.toml'));
  const lines = [`no native binary for this platform (${name}: ${describeRuntime()}).`];
  if (builtHere) {
    lines.push(
      `This is a source checkout without a build: run \`npm run build\` (needs Rust) to make ` +
        `anilink-api-wrapper.${name}.node.`,
    );
  } else if (shipped.includes(packageName)) {
    lines.push(
      `Its binary comes in the optional dependency ${packageName}@${pkg.version}, which is not installed.`,
      `Fix: install again without omitting optional dependencies (no --omit=optional / --no-optional), ` +
        `or add it directly: npm install ${packageName}@${pkg.version}. A lockfile made on another ` +
        `platform can also leave it out: delete node_modules and the lockfile, then npm install.`,
    );
  } else {
    const supported = shipped.map((dep) => dep.slice(pkg.name.length + 1));
    lines.push(
      `No prebuilt binary is published for ${name}${supported.length ? ` (prebuilt: ${supported.join(', ')})` : ''}.`,
      'Fix: build it from source with Rust: clone the repository, run `npm install` there, and ' +
        'install that folder (npm install /path/to/clone).',
    );
  }
  return bindingError(lines.join('\n'));
}

function loadBinding() {
  const name = platformName();
  const local = join(root, `${pkg.napi.binaryName}.${name}.node`);
  if (existsSync(local)) return require(local);

  const packageName = `${pkg.name}-${name}`;
  let packageJson;
  try {
    packageJson = require.resolve(`${packageName}/package.json`);
  } catch {
    throw missingBinary(name, packageName);
  }
  const installed = require(packageJson).version;
  if (installed !== pkg.version) {
    throw bindingError(
      `${packageName}@${installed} is installed, but this is ${pkg.name}@${pkg.version}: the native ` +
        `binary must be the same version. Fix: npm install ${packageName}@${pkg.version}.`,
    );
  }
  try {
    return require(packageName);
  } catch (cause) {
    const linuxHint =
      process.platform === 'linux'
        ? '\nLinux gnu builds need glibc 2.17 or later; musl systems (Alpine) use the -musl package.'
        : '';
    throw bindingError(
      `the native binary in ${packageName} could not be loaded on this platform (${describeRuntime()}): ` +
        `${cause.message}${linuxHint}`,
      cause,
    );
  }
}

module.exports = loadBinding();
