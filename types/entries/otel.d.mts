// ESM typings of the "./otel" entry: the same declarations as otel.d.ts.
export * from './otel.js';
