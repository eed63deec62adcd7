#!/usr/bin/env node
// Thin launcher: the CLI is compiled to dist/ by `npm install` (the `prepare` script).
import('../dist/cli/index.js').catch((err) => {
  if (err && err.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes('dist/cli')) {
    console.error('renderbridge is not built yet: run `npm install` (or `npm run build`) in the repository first.');
    process.exit(70);
  }
  throw err;
});
