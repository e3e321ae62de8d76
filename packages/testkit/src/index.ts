export * from './services.js';
export * from './databases.js';
export * from './fixture-site.js';
export * from './fleet.js';
export * from './pg-tx.js';
export * from './lifecycle.js';
export * from './process.js';
export * from './tcp-proxy.js';
