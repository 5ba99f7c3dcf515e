import otel from './index.cjs';

export const { AniLinkInstrumentation } = otel;
