import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { defaultConfig, LEGACY_DATA_DIR } from '../service/config-defaults.js';
import { SQLITE_FILE_NAME } from '../service/local-stack.js';
import { openKeyStore } from '../service/stack.js';
import { addEngineOptions, engineConfig, type EngineOptions } from './engines.js';
import { startService } from '../service/server.js';
import { DATA_DIR_DEFAULT, resolveDataDir } from './options.js';
import { addSettingOptions, configValue, formatEffectiveConfig, s3Credentials, tableConfig } from './settings.js';
import { addRenderOptions, renderConfig, type RenderOptions } from './render-options.js';
import { addUnpackOptions, unpackConfig, type UnpackOptions } from './unpack-options.js';
import { addBlobOptions, blobConfig, type BlobOptions } from './blob-options.js';
import { addSessionOptions, sessionConfig, type SessionOptions } from './session-options.js';
import { VERSION } from './version.js';

interface ServiceOptions extends EngineOptions, UnpackOptions, BlobOptions, RenderOptions, SessionOptions {
  dataDir?: string;
  printConfig?: boolean;
}

export function registerServiceCommand(program: Command): void {
  const cmd = program
    .command('service')
    .description(
      'Run the reference render service: embedded defaults (SQLite, local files), or PostgreSQL, Redis and S3',
    )
    .option('--data-dir <dir>', `folder for the database and stored files (default: ${DATA_DIR_DEFAULT})`);
  addSessionOptions(addRenderOptions(addBlobOptions(addUnpackOptions(addEngineOptions(cmd)))));
  // Last: the table adds only the settings the modules above did not.
  addSettingOptions(cmd, 'service', defaultConfig() as unknown as Record<string, unknown>).action(
    async (o: ServiceOptions) => {
      // Resolved as `renderbridge admin` resolves it, so admin commands run anywhere find this database.
      const data = resolveDataDir(o.dataDir);
      const engines = engineConfig(o);
      const config = defaultConfig({
        ...engines,
        ...unpackConfig(o),
        ...renderConfig(o),
        ...blobConfig(o),
        ...sessionConfig(o),
        ...tableConfig(cmd),
        ...(engines.s3 ? { s3: { ...engines.s3, ...s3Credentials(cmd) } } : {}),
        dataDir: data.dir,
      });
      if (o.printConfig) {
        process.stdout.write(formatEffectiveConfig(cmd, (key) => configValue(config, key)));
        return;
      }
      const svc = await startService(config, { version: VERSION });
      const store = await openKeyStore(config);
      const activeKeys = (await store.keys.listKeys()).filter((k) => !k.revokedAt).length;
      await store.close();
      // Human lines go to stderr so stdout stays the JSON log stream.
      console.error(`renderbridge service ${VERSION} listening`);
      console.error(`  API base URL: ${svc.baseUrl}`);
      console.error(
        `  dashboard:    ${config.publicUrl ?? svc.origin}/ (sign in with an API key; API reference at /docs)`,
      );
      const dataFrom = cmd.getOptionValueSource('dataDir') === 'config' ? 'the config file' : data.from;
      console.error(`  data folder:  ${config.dataDir}${data.from === 'default' ? '' : ` (from ${dataFrom})`}`);
      // Earlier versions kept the data in ./.renderbridge/service of the folder they ran in: say where it went.
      const legacy = path.resolve(LEGACY_DATA_DIR);
      if (!config.databaseUrl && data.from === 'default' && existsSync(path.join(legacy, SQLITE_FILE_NAME))) {
        console.error(
          `  note:         ${legacy} holds a database of an earlier version; pass ` +
            `--data-dir ${LEGACY_DATA_DIR} to keep using it`,
        );
      }
      const e = svc.engines;
      console.error(`  engines:      state ${e.state}, queue ${e.queue}, storage ${e.storage}`);
      console.error(
        `  worker API:   ${svc.workerApiOrigin ?? svc.origin}/internal/worker/v1 (per-worker tokens: ` +
          'renderbridge admin create-worker-token' +
          (config.workerToken ? '; also the DEPRECATED farm-wide RENDERBRIDGE_WORKER_TOKEN' : '') +
          ')',
      );
      console.error(`  extensions:   ${config.blobUploads ? 'content-addressed-uploads' : 'none (--no-blob-uploads)'}`);
      const w = svc.worker;
      console.error(
        w.runtime
          ? `  worker:       ${w.slots.map((s) => s.id).join(', ')} with Blender ` +
              `${w.builds.map((b) => b.version.text).join(', ')}`
          : config.workers === 0
            ? '  worker:       none in this process (run `renderbridge worker` beside it)'
            : '  worker:       NOT running: no Blender found (apt-get install blender, or --blender PATH)',
      );
      if (activeKeys === 0) {
        console.error('  No API key yet. Create one with:');
        const where = config.databaseUrl
          ? '--database-url "$RENDERBRIDGE_DATABASE_URL"'
          : `--data-dir ${config.dataDir}`;
        console.error(`    npx renderbridge admin create-key ${where} --workspace studio --label "my key"`);
      }
      const stop = (signal: string) => {
        svc.app.log.info({ signal }, 'shutting down');
        void svc.close().then(() => process.exit(0));
      };
      process.once('SIGTERM', () => stop('SIGTERM'));
      process.once('SIGINT', () => stop('SIGINT'));
    },
  );
}
