export * from './api.js';
export * from './errors.js';
