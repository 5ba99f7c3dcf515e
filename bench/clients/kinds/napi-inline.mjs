// The one-thread floor (bench/napi-floor's sendInline): the napi-floor's request and answer,
// driven on the JavaScript thread, so that neither crosses threads. What napi-floor costs
// above it is the hand-off between the JavaScript thread and the tokio worker. Linux only.
import { createFloorClient } from './napi-floor.mjs';

export const createClient = (options) => createFloorClient(options, 'inline');
