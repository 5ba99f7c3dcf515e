// ESM typings of the "./testing" entry: the same declarations as testing.d.ts.
export * from './testing.js';
