// Rewrites the generated parts of docs/reference/configuration.md (the settings tables) and
// deploy/systemd/renderbridge.env.example from the service settings table.
import { readFileSync, writeFileSync } from 'node:fs';
import {
  ENV_BEGIN,
  ENV_END,
  README_BEGIN,
  README_END,
  replaceBetween,
  settingsEnvExample,
  settingsMarkdown,
} from '../service/settings/docs.js';

for (const [rel, begin, end, body] of [
  ['../docs/reference/configuration.md', README_BEGIN, README_END, settingsMarkdown()],
  ['../deploy/systemd/renderbridge.env.example', ENV_BEGIN, ENV_END, settingsEnvExample()],
] as const) {
  const file = new URL(rel, import.meta.url);
  writeFileSync(file, replaceBetween(readFileSync(file, 'utf8'), begin, end, body));
  console.log(`wrote ${file.pathname}`);
}
