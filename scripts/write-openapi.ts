import { writeFileSync } from 'node:fs';
import { buildOpenApiDocument } from '../shared/openapi.js';

const file = new URL('../shared/openapi.json', import.meta.url);
writeFileSync(file, `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`);
console.log(`wrote ${file.pathname}`);
