// ESM typings of the "./anilist" entry: the same declarations as anilist.d.ts, without the CommonJS
// default export that an `import x from` would otherwise type-check against.
export * from './anilist.js';
