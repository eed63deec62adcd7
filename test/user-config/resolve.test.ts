// config.toml checking (unknown keys and bad values name the key, file and line) and the one
// precedence rule: flag > environment > profile > default, each value with its source.
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../user-config/errors.js';
import { parseConfigText, type LoadedConfig } from '../../user-config/file.js';
import { resolveConfig } from '../../user-config/resolve.js';

const FILE = '/home/ann/.config/renderbridge/config.toml';
const TEXT = `defaultProfile = "studio"

[profiles.studio]
serviceUrl = "http://farm:8420"
downloadsDir = "~/renders"
video = true
overrides = { sampleCount = 64 }

[profiles.home]
serviceUrl = "http://127.0.0.2:8420"
`;

function loaded(text: string): LoadedConfig {
  return { path: FILE, exists: true, data: parseConfigText(text, FILE) };
}

function thrown(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('config.toml', () => {
  it('an unknown key is an error naming the key, the file and its line', () => {
    const err = thrown(() =>
      parseConfigText('[profiles.studio]\nserviceUrl = "http://farm"\nsevriceUrl = "x"\n', FILE),
    );
    expect(err.message).toBe(`${FILE}:3: unknown key "profiles.studio.sevriceUrl"`);
  });

  it('a bad value names the key and line; broken TOML names the line', () => {
    const err = thrown(() => parseConfigText('[profiles.studio]\nvideo = true\nserviceUrl = "farm:8420"\n', FILE));
    expect(err.message).toMatch(new RegExp(`^${FILE}:3: "profiles.studio.serviceUrl": a URL with http`));
    expect(thrown(() => parseConfigText('a = 1\nb = = 2\n', FILE)).message).toMatch(
      new RegExp(`^${FILE}:2: not valid TOML`),
    );
    expect(
      thrown(() => parseConfigText('[profiles.studio]\noverrides = { sampleCount = "many" }\n', FILE)).message,
    ).toContain('profiles.studio.overrides.sampleCount');
  });
});

describe('resolveConfig', () => {
  const home = '/home/ann';

  it('flag beats env beats profile beats default, each value naming its source', () => {
    const config = loaded(TEXT);
    const fromProfile = resolveConfig({ config, env: {}, home });
    expect(fromProfile.profile).toEqual({ value: 'studio', source: `defaultProfile in ${FILE}` });
    expect(fromProfile.settings.serviceUrl).toEqual({
      value: 'http://farm:8420/api/external/v1',
      source: `profile "studio" in ${FILE}`,
    });
    expect(fromProfile.settings.downloadsDir.value).toBe('/home/ann/renders');
    expect(fromProfile.settings.overrides.value).toEqual({ sampleCount: 64 });
    expect(fromProfile.settings.blender).toEqual({ value: 'blender', source: 'default' });

    const fromEnv = resolveConfig({ config, env: { RENDERBRIDGE_SERVICE_URL: 'http://env-farm:1' }, home });
    expect(fromEnv.settings.serviceUrl).toEqual({
      value: 'http://env-farm:1/api/external/v1',
      source: 'env RENDERBRIDGE_SERVICE_URL',
    });

    const fromFlag = resolveConfig({
      config,
      env: { RENDERBRIDGE_SERVICE_URL: 'http://env-farm:1' },
      home,
      flags: { serviceUrl: 'http://flag-farm:2/api/external/v1' },
    });
    expect(fromFlag.settings.serviceUrl).toEqual({
      value: 'http://flag-farm:2/api/external/v1',
      source: 'flag --service',
    });
  });

  it('the profile: --profile beats RENDERBRIDGE_PROFILE beats defaultProfile beats "default"', () => {
    const config = loaded(TEXT);
    expect(resolveConfig({ config, env: { RENDERBRIDGE_PROFILE: 'home' }, home }).settings.serviceUrl.value).toBe(
      'http://127.0.0.2:8420/api/external/v1',
    );
    expect(
      resolveConfig({ config, env: { RENDERBRIDGE_PROFILE: 'home' }, home, profileFlag: 'studio' }).profile.source,
    ).toBe('flag --profile');
    const empty: LoadedConfig = { path: FILE, exists: false, data: {} };
    const d = resolveConfig({ config: empty, env: {}, home });
    expect(d.profile).toEqual({ value: 'default', source: 'default' });
    expect(d.settings.serviceUrl).toEqual({ value: 'http://127.0.0.1:8420/api/external/v1', source: 'default' });
    expect(d.settings.daemonPort).toEqual({ value: 47_615, source: 'default' });
    expect(d.settings.reconnectPatience).toEqual({ value: 120, source: 'default' });
    expect(
      resolveConfig({ config: empty, env: { RENDERBRIDGE_RECONNECT_PATIENCE: '300' }, home }).settings
        .reconnectPatience,
    ).toEqual({ value: 300, source: 'env RENDERBRIDGE_RECONNECT_PATIENCE' });
  });

  it('a bad value is an error naming the setting and its source, never a fallback', () => {
    const config = loaded(TEXT);
    expect(thrown(() => resolveConfig({ config, env: { RENDERBRIDGE_DAEMON_PORT: 'eighty' }, home })).message).toBe(
      'daemonPort (from env RENDERBRIDGE_DAEMON_PORT): "eighty" is not a port number (0-65535)',
    );
    expect(
      thrown(() => resolveConfig({ config, env: { RENDERBRIDGE_RECONNECT_PATIENCE: 'forever' }, home })).message,
    ).toBe(
      'reconnectPatience (from env RENDERBRIDGE_RECONNECT_PATIENCE): "forever" is not a whole number of ' +
        'seconds (0-3600)',
    );
    expect(thrown(() => resolveConfig({ config, env: {}, home, flags: { serviceUrl: 'farm:8420' } })).message).toMatch(
      /^serviceUrl \(from flag --service\): /,
    );
    expect(thrown(() => resolveConfig({ config, env: { RENDERBRIDGE_PROFILE: 'nope' }, home })).message).toMatch(
      /^profile "nope" \(from env RENDERBRIDGE_PROFILE\) is not in /,
    );
    expect(
      resolveConfig({ config, env: { RENDERBRIDGE_PROFILE: 'nope' }, home, allowMissingProfile: true }).settings
        .serviceUrl.source,
    ).toBe('default');
  });
});
