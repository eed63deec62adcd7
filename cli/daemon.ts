// `renderbridge daemon`: the local bridge on 127.0.0.1 for the Blender add-on and the tray app.
import type { Command } from 'commander';
import { startBridgeDaemon } from '../daemon/assemble.js';
import { loadDaemonConfig } from '../daemon/config.js';
import { migrateLegacyDirs } from '../user-config/migrate.js';
import { locateUserFiles } from '../user-config/locate.js';
import { configOrUsage, type ProfileOption } from './user-settings.js';
import { createDaemonLogger } from '../daemon/http/logging.js';
import { findLiveDaemon, stateFilePath } from '../daemon/state-file.js';
import { CliError } from './errors.js';
import { EXIT } from './exit-codes.js';
import { printJson } from './output.js';
import { parsePort } from './options.js';
import { VERSION } from './version.js';

interface DaemonOptions extends ProfileOption {
  port?: number;
  service?: string;
  hotFolder?: string;
  downloads?: string;
  blender?: string;
  stateDir?: string;
  logLevel: string;
  printState?: boolean;
  json?: boolean;
}

export function registerDaemonCommand(program: Command): void {
  program
    .command('daemon')
    .description('Run the local bridge (127.0.0.1 only) that the Blender add-on and the tray app talk to')
    .option(
      '--port <port>',
      'port on 127.0.0.1 (env: RENDERBRIDGE_DAEMON_PORT; default 47615; 0 = any free one; read at start, ' +
        "while the profile's settings follow edits of config.toml)",
      parsePort,
    )
    .option(
      '--service <url>',
      "service origin or API root (env: RENDERBRIDGE_SERVICE_URL; else the profile's serviceUrl; default " +
        'http://127.0.0.1:8420)',
    )
    .option(
      '--hot-folder <dir>',
      'watch this folder: a .blend or .zip written there is submitted (env: RENDERBRIDGE_HOT_FOLDER; else ' +
        "the profile's hotFolder; default none)",
    )
    .option(
      '--downloads <dir>',
      "parent of the per-job output folders (env: RENDERBRIDGE_DOWNLOADS; else the profile's downloadsDir; " +
        'default ~/renderbridge-outputs)',
    )
    .option(
      '--blender <path>',
      "Blender used to find the files a .blend needs (env: RENDERBRIDGE_BLENDER; else the profile's blender; " +
        'default blender on PATH)',
    )
    .option(
      '--state-dir <dir>',
      "folder of the state file with the port and token (default: the platform's state folder, " +
        '$XDG_STATE_HOME/renderbridge on Linux)',
    )
    .option('--log-level <level>', 'fatal, error, warn, info, debug or silent', 'info')
    .option('--print-state', 'print where the state file is and whether a daemon is running, then exit')
    .option('--json', 'with --print-state: print JSON')
    .action(async (o: DaemonOptions) => {
      // The flags are kept apart from the file: a reload of config.toml resolves them again, so a
      // flag still beats the edited file.
      const flags = {
        serviceUrl: o.service,
        downloadsDir: o.downloads,
        hotFolder: o.hotFolder,
        blender: o.blender,
        daemonPort: o.port,
      };
      const overrides = o.stateDir ? { stateDir: o.stateDir } : {};
      const where = locateUserFiles();
      const moved = await migrateLegacyDirs(where.platform, where.dirs, where.legacy);
      for (const m of moved) console.error(`moved ${m.from} to ${m.to}`);
      const reloadConfig = () => loadDaemonConfig(process.env, flags, o.profile, overrides);
      const config = configOrUsage(reloadConfig);
      if (o.printState) return printState(config.stateDir, Boolean(o.json));
      const daemon = await startBridgeDaemon(config, {
        version: VERSION,
        logger: createDaemonLogger(o.logLevel as 'info'),
        reloadConfig,
      }).catch((err: unknown) => {
        throw new CliError(err instanceof Error ? err.message : String(err), EXIT.FAILURE);
      });
      const health = await daemon.clients.apiKeySource();
      // Human lines on stderr; stdout is the JSON log stream.
      console.error(`renderbridge daemon ${VERSION} listening on ${daemon.origin} (127.0.0.1 only)`);
      console.error(`  service:     ${config.serviceUrl} (profile "${config.profile}", ${config.configFile})`);
      console.error(`  state file:  ${daemon.stateFile} (port and access token, mode 0600)`);
      const keyFrom = health === 'env' ? 'RENDERBRIDGE_API_KEY variable' : 'OS keychain';
      const noKey = 'none: store one with `renderbridge login` or the tray app, or set RENDERBRIDGE_API_KEY';
      console.error(`  API key:     ${health ? `from the ${keyFrom}` : noKey}`);
      console.error(`  downloads:   ${config.downloadsDir}`);
      if (config.hotFolder) console.error(`  hot folder:  ${config.hotFolder}`);
      const stop = (signal: string): void => {
        daemon.app.log.info({ signal }, 'shutting down');
        void daemon.close().then(() => process.exit(0));
      };
      process.once('SIGTERM', () => stop('SIGTERM'));
      process.once('SIGINT', () => stop('SIGINT'));
    });
}

async function printState(stateDir: string, json: boolean): Promise<void> {
  const live = await findLiveDaemon(stateDir);
  const file = stateFilePath(stateDir);
  if (json)
    return printJson({ stateFile: file, running: Boolean(live), pid: live?.pid ?? null, port: live?.port ?? null });
  console.log(`state file: ${file}`);
  console.log(
    live ? `running: pid ${live.pid} on 127.0.0.1:${live.port}` : 'running: no (start one with: renderbridge daemon)',
  );
}
