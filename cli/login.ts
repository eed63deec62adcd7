// `renderbridge login` and `logout`: the API key of a profile, kept only in the OS keychain (one
// entry per profile; the default profile keeps the entry of the single key of older versions).
// The key is checked against the service before it is stored, and where no keychain answers the
// command refuses rather than write it anywhere else.
import type { Command } from 'commander';
import { KeytarKeychain } from '../daemon/keychain/keytar.js';
import { KeychainUnavailableError } from '../daemon/keychain/errors.js';
import { RenderJobClient } from '../shared/client/client.js';
import { keychainEntryFor } from '../user-config/keychain-entry.js';
import { loadConfigFile, writeConfigFile } from '../user-config/file.js';
import { locateUserFiles } from '../user-config/locate.js';
import { CliError } from './errors.js';
import { EXIT } from './exit-codes.js';
import { printJson } from './output.js';
import { readSecret } from './read-secret.js';
import { configOrUsage, resolveUserSettings, type ProfileOption } from './user-settings.js';
import { VERSION } from './version.js';

interface LoginOptions extends ProfileOption {
  service?: string;
  json?: boolean;
}

const NO_KEYCHAIN =
  'no OS keychain answers, so the key was not stored (renderbridge keeps keys only in the OS keychain, never ' +
  'in a file): unlock or install one (Linux: a Secret Service such as gnome-keyring) and try again';

function keychainProblem(err: unknown): CliError {
  const why =
    err instanceof KeychainUnavailableError
      ? err.message.replace(/^keychain unavailable: /, '')
      : (err as Error).message;
  return new CliError(`${NO_KEYCHAIN} (${why})`, EXIT.FAILURE);
}

/** Records --service in the profile (creating it), so later commands and the daemon use that farm. */
function rememberProfile(profile: string, service: string | undefined): void {
  const where = locateUserFiles();
  const file = configOrUsage(() => loadConfigFile(where.configFile));
  if (service === undefined && file.data.profiles?.[profile]) return;
  const data = structuredClone(file.data);
  const profiles = (data.profiles ??= {});
  profiles[profile] = { ...profiles[profile], ...(service !== undefined ? { serviceUrl: service } : {}) };
  configOrUsage(() => writeConfigFile(where.configFile, data));
}

export function registerLoginCommands(program: Command): void {
  program
    .command('login')
    .description(
      'Store the API key of a profile in the OS keychain, after checking it against the service (the key is ' +
        'read from a prompt without echo, or from stdin)',
    )
    .option(
      '--service <url>',
      'the farm of this profile: an origin such as http://farm:8420, saved in the profile (env: ' +
        "RENDERBRIDGE_SERVICE_URL; else the profile's serviceUrl)",
    )
    .option('--json', 'print JSON')
    .action(async (o: LoginOptions) => {
      const r = resolveUserSettings(o, { serviceUrl: o.service }, { allowMissingProfile: true });
      const profile = r.profile.value;
      const entry = keychainEntryFor(profile);
      const keychain = new KeytarKeychain(entry);
      // Refuse before reading or sending the key when there is nowhere safe to keep it.
      await keychain.get().catch((err: unknown) => {
        throw keychainProblem(err);
      });
      const key = await readSecret(`API key for ${r.settings.serviceUrl.value} (profile "${profile}"): `);
      if (!key) throw new CliError('no API key was given (type it at the prompt, or pipe it on stdin)', EXIT.USAGE);
      const serviceUrl = r.settings.serviceUrl.value;
      const client = new RenderJobClient({
        baseUrl: serviceUrl,
        apiKey: key,
        maxRetries: 0,
        requestTimeoutMs: 15_000,
        userAgent: `renderbridge-cli/${VERSION}`,
      });
      await client.listJobs({ pageSize: 1 });
      await keychain.set(key).catch((err: unknown) => {
        throw keychainProblem(err);
      });
      rememberProfile(profile, o.service);
      if (o.json) return printJson({ ok: true, profile, serviceUrl, keychain: entry });
      console.error(
        `Logged in to ${serviceUrl} (profile "${profile}"): the key is in the OS keychain (${entry.service} ` +
          `/ ${entry.account}).`,
      );
    });

  program
    .command('logout')
    .description('Remove the API key of a profile from the OS keychain')
    .option('--json', 'print JSON')
    .action(async (o: LoginOptions) => {
      const r = resolveUserSettings(o, {}, { allowMissingProfile: true });
      const entry = keychainEntryFor(r.profile.value);
      const removed = await new KeytarKeychain(entry).delete().catch((err: unknown) => {
        throw keychainProblem(err);
      });
      if (o.json) return printJson({ ok: true, profile: r.profile.value, removed });
      console.error(
        removed
          ? `The key of profile "${r.profile.value}" was removed from the OS keychain.`
          : `No key was stored for profile "${r.profile.value}".`,
      );
    });
}
