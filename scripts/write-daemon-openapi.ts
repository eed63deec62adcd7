// Writes shared/daemon/openapi.json, the daemon's local API document (run by `npm run openapi`).
import { writeFileSync } from 'node:fs';
import { buildDaemonOpenApiDocument } from '../shared/daemon/openapi.js';

const file = new URL('../shared/daemon/openapi.json', import.meta.url);
writeFileSync(file, `${JSON.stringify(buildDaemonOpenApiDocument(), null, 2)}\n`);
console.log(`wrote ${file.pathname}`);
