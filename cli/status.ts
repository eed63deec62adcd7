// `renderbridge status`: which farm and profile the commands and the daemon use, whether a key is
// there (keychain entry of the profile, else RENDERBRIDGE_API_KEY), whether the daemon runs and
// whether Blender is found. Nothing is sent to the service. Exit 0 with a key, else the auth code.
import { accessSync, constants } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { defaultDaemonConfig } from '../daemon/config.js';
import { findLiveDaemon } from '../daemon/state-file.js';
import { ApiKeyProvider } from '../daemon/keychain/api-key.js';
import { KeytarKeychain } from '../daemon/keychain/keytar.js';
import { keychainEntryFor } from '../user-config/keychain-entry.js';
import { EXIT } from './exit-codes.js';
import { printJson } from './output.js';
import { resolveUserSettings, type ProfileOption } from './user-settings.js';

interface StatusOptions extends ProfileOption {
  service?: string;
  json?: boolean;
}

/** The executable `blender` names: a path as given, else the first match on PATH. */
function findExecutable(name: string, env: NodeJS.ProcessEnv): string | null {
  const candidates =
    name.includes('/') || name.includes('\\')
      ? [name]
      : (env.PATH ?? '')
          .split(path.delimiter)
          .filter(Boolean)
          .map((d) => path.join(d, name));
  for (const c of candidates) {
    try {
      accessSync(c, constants.X_OK);
      return c;
    } catch {
      // not this one
    }
  }
  return null;
}

export function registerStatusCommand(program: Command): void {
  program
    .command('status')
    .description(
      'Show the farm and profile in use, whether an API key is stored, whether the daemon runs and whether ' +
        'Blender is found',
    )
    .option('--service <url>', "the farm to report on (env: RENDERBRIDGE_SERVICE_URL; else the profile's serviceUrl)")
    .option('--json', 'print JSON')
    .action(async (o: StatusOptions) => {
      const r = resolveUserSettings(o, { serviceUrl: o.service });
      const config = defaultDaemonConfig(process.env, {}, r);
      const entry = keychainEntryFor(config.profile);
      const keys = new ApiKeyProvider({ serviceUrl: config.serviceUrl, keychain: new KeytarKeychain(entry) });
      const keySource = await keys.apiKeySource();
      const live = await findLiveDaemon(config.stateDir);
      const blender = findExecutable(config.blender, process.env);
      const doc = {
        ok: keySource !== null,
        profile: r.profile,
        serviceUrl: r.settings.serviceUrl,
        configFile: r.file.path,
        key: {
          present: keySource !== null,
          source: keySource,
          keychainEntry: entry,
          keychainProblem: keys.keychainProblem ?? null,
        },
        daemon: { running: Boolean(live), pid: live?.pid ?? null, port: live?.port ?? null },
        blender: { path: config.blender, found: blender !== null, resolved: blender },
      };
      process.exitCode = doc.ok ? EXIT.OK : EXIT.AUTH;
      if (o.json) return printJson(doc);
      console.log(`farm:    ${doc.serviceUrl.value}  (${doc.serviceUrl.source})`);
      console.log(`profile: ${doc.profile.value}  (${doc.profile.source})`);
      const login = `renderbridge login${config.profile === 'default' ? '' : ` --profile ${config.profile}`}`;
      const key = keySource
        ? `yes, from the ${keySource === 'env' ? 'RENDERBRIDGE_API_KEY variable' : 'OS keychain'}`
        : `none: run \`${login}\``;
      console.log(`key:     ${key}${doc.key.keychainProblem ? ` (${doc.key.keychainProblem})` : ''}`);
      const notRunning = 'not running (start it with: renderbridge daemon)';
      console.log(`daemon:  ${live ? `running, pid ${live.pid} on 127.0.0.1:${live.port}` : notRunning}`);
      const notFound = `${config.blender} not found (set it with: renderbridge config set blender PATH)`;
      console.log(`blender: ${blender ? blender : notFound}`);
    });
}
