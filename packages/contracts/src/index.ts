export * from './events/envelope.js';
export * from './events/catalog.js';
export type * as Api from './openapi/types.js';
export type { components, paths, operations } from './openapi/types.js';
export * from './browser/actions.js';
export * from './internal/render.js';
