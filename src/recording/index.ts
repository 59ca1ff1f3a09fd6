// The Recording contract: what this folder offers to every other module.
export * from './errors.js';
export * from './schema.js';
export type * from './types.js';
