// `--render-mode`, `--warm-idle` and `--warm-min-free-memory` (and their environment variables) on
// the commands that run a worker: parsed, shown with their defaults in --help, refused when bad,
// and carried through ServiceConfig into the worker's settings.
import { Command } from 'commander';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { addRenderOptions, renderConfig, type RenderOptions } from '../../cli/render-options.js';
import { defaultConfig } from '../../service/config-defaults.js';
import { defaultWorkerSettings } from '../../service/worker/runtime/env.js';
import { serviceAndWorkerHelp } from '../helpers/command-help.js';

const GiB = 1024 ** 3;
const VARS = ['RENDERBRIDGE_RENDER_MODE', 'RENDERBRIDGE_WARM_IDLE', 'RENDERBRIDGE_WARM_MIN_FREE_MEMORY'] as const;

beforeEach(() => {
  for (const v of VARS) delete process.env[v];
});
afterEach(() => {
  for (const v of VARS) delete process.env[v];
});

async function parse(argv: string[]): Promise<RenderOptions> {
  let seen: RenderOptions | undefined;
  const cmd = addRenderOptions(new Command('x').exitOverride().configureOutput({ writeErr: () => undefined })).action(
    (o: RenderOptions) => void (seen = o),
  );
  await cmd.parseAsync(argv, { from: 'user' });
  return seen!;
}

/** What a worker started with these options does. */
function settingsFrom(o: RenderOptions) {
  const s = defaultWorkerSettings(defaultConfig(renderConfig(o)));
  return { renderMode: s.renderMode, warmIdleMs: s.warmIdleMs, warmMinFreeMemoryBytes: s.warmMinFreeMemoryBytes };
}

describe('render options', () => {
  it('default to warm processes ended after 60 s idle or below 1 GiB free, in service and worker --help', async () => {
    expect(settingsFrom(await parse([]))).toEqual({
      renderMode: 'warm',
      warmIdleMs: 60_000,
      warmMinFreeMemoryBytes: GiB,
    });
    for (const help of Object.values(serviceAndWorkerHelp())) {
      expect(help).toContain('--render-mode <mode>');
      expect(help).toContain('choices: "warm", "chunked", default: "warm", env: RENDERBRIDGE_RENDER_MODE');
      expect(help).toContain('--warm-idle <seconds>');
      expect(help).toContain('default: 60, env: RENDERBRIDGE_WARM_IDLE');
      expect(help).toContain('--warm-min-free-memory <size>');
      expect(help).toContain('default: 1GiB, env: RENDERBRIDGE_WARM_MIN_FREE_MEMORY');
    }
  });

  it('come from the environment, and a flag wins over it', async () => {
    process.env.RENDERBRIDGE_RENDER_MODE = 'chunked';
    process.env.RENDERBRIDGE_WARM_IDLE = '5';
    process.env.RENDERBRIDGE_WARM_MIN_FREE_MEMORY = '4GiB';
    expect(settingsFrom(await parse([]))).toEqual({
      renderMode: 'chunked',
      warmIdleMs: 5000,
      warmMinFreeMemoryBytes: 4 * GiB,
    });
    expect(settingsFrom(await parse(['--render-mode', 'warm', '--warm-idle', '0.5']))).toEqual({
      renderMode: 'warm',
      warmIdleMs: 500,
      warmMinFreeMemoryBytes: 4 * GiB,
    });
  });

  it('refuse an unknown mode, a negative idle time and a bad size', async () => {
    await expect(parse(['--render-mode', 'hot'])).rejects.toThrow(/Allowed choices are warm, chunked/);
    await expect(parse(['--warm-idle', '-1'])).rejects.toThrow(/expected seconds/);
    process.env.RENDERBRIDGE_WARM_MIN_FREE_MEMORY = 'plenty';
    await expect(parse([])).rejects.toThrow(/RENDERBRIDGE_WARM_MIN_FREE_MEMORY/);
  });
});
