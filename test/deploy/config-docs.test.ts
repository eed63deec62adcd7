// The settings table is the one list of service and worker settings: every ServiceConfig field is
// in it, each of its flags is an option of its commands reading its variable, and the tables of
// docs/reference/configuration.md and the systemd env example are what `npm run config-docs` writes
// from it.
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { registerServiceCommand } from '../../cli/service.js';
import { registerWorkerCommand } from '../../cli/worker.js';
import { defaultConfig } from '../../service/config-defaults.js';
import {
  ENV_BEGIN,
  ENV_END,
  README_BEGIN,
  README_END,
  settingsEnvExample,
  settingsMarkdown,
} from '../../service/settings/docs.js';
import { envName, longFlag } from '../../service/settings/setting.js';
import { SETTINGS } from '../../service/settings/table.js';

function between(text: string, begin: string, end: string): string {
  const a = text.indexOf(begin);
  const b = text.indexOf(end);
  expect(a, `${begin} in the file`).toBeGreaterThanOrEqual(0);
  expect(b, `${end} after it`).toBeGreaterThan(a);
  return text.slice(a + begin.length, b).trim();
}

// Commands read these variables themselves (resolveDataDir, blobConfig), not through commander.
const READ_BY_COMMAND = new Set(['RENDERBRIDGE_DATA_DIR', 'RENDERBRIDGE_BLOB_UPLOADS']);

describe('service settings table', () => {
  it('has every ServiceConfig field (S3 fields nested), once', () => {
    const keys = SETTINGS.map((s) => s.key);
    expect(new Set(keys).size).toBe(keys.length);
    const fields = Object.keys(defaultConfig()).filter((k) => k !== 's3');
    for (const f of fields) expect(keys, `ServiceConfig.${f}`).toContain(f);
    // forcePathStyle follows from the endpoint (engineConfig); the rest are settings.
    for (const f of ['bucket', 'endpoint', 'region', 'prefix', 'accessKeyId', 'secretAccessKey'])
      expect(keys).toContain(`s3.${f}`);
  });

  it('gives every setting a distinct variable, and a flag to all but secrets', () => {
    const envs = SETTINGS.map(envName);
    expect(new Set(envs).size).toBe(envs.length);
    for (const s of SETTINGS) if (!s.flag) expect(s.secret, s.key).toBe('value');
  });

  it('is what service and worker accept: each flag an option reading its variable', () => {
    const program = new Command('renderbridge');
    registerServiceCommand(program);
    registerWorkerCommand(program);
    for (const s of SETTINGS.filter((x) => x.flag)) {
      for (const name of s.commands) {
        const cmd = program.commands.find((c) => c.name() === name)!;
        const opt = cmd.options.find((o) => o.long === longFlag(s));
        expect(opt, `${name} ${longFlag(s)}`).toBeDefined();
        if (!READ_BY_COMMAND.has(envName(s))) expect(opt!.envVar, `${name} ${longFlag(s)}`).toBe(envName(s));
      }
    }
    for (const name of ['service', 'worker']) {
      const help = program.commands.find((c) => c.name() === name)!.helpInformation();
      expect(help).toContain('--config <file>');
      expect(help).toContain('--print-config');
    }
  });

  it('is what docs/reference/configuration.md and the systemd env example list (npm run config-docs)', () => {
    const page = readFileSync('docs/reference/configuration.md', 'utf8');
    expect(between(page, README_BEGIN, README_END)).toBe(settingsMarkdown().trim());
    const example = readFileSync('deploy/systemd/renderbridge.env.example', 'utf8');
    expect(between(example, ENV_BEGIN, ENV_END)).toBe(settingsEnvExample().trim());
    for (const s of SETTINGS) {
      expect(page, s.key).toContain(`\`${envName(s)}\``);
      expect(example, s.key).toMatch(new RegExp(`^#?${envName(s)}=`, 'm'));
    }
  });
});
