// ESM typings of the "." entry: the same declarations as index.d.ts, without the CommonJS
// default export that an `import x from` would otherwise type-check against.
export * from './index.js';
