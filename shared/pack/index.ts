export * from './manifest.js';
export * from './dependencies.js';
