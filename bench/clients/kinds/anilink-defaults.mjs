// AniLink at its default pool bounds (maxSockets 20, maxFreeSockets 5), as users run it: beside
// the capped `anilink` row, what the pool costs when it is not given one socket per request.
import { createClient as createAnilink } from './anilink.mjs';

export const createClient = (options) => createAnilink({ ...options, connections: 'defaults' });
