// ESM typings of the "./mal" entry: the same declarations as mal.d.ts, without the CommonJS
// default export that an `import x from` would otherwise type-check against.
export * from './mal.js';
