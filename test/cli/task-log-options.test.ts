// `--task-log-max-bytes` (RENDERBRIDGE_TASK_LOG_MAX_BYTES) on the commands that run a worker:
// 16 MiB by default, from the environment, a flag over it, shown in --help, refused when not a
// size, and carried through ServiceConfig into the worker's settings (the cap of each task log).
import { Command } from 'commander';
import { afterEach, describe, expect, it } from 'vitest';
import { addRenderOptions, renderConfig, type RenderOptions } from '../../cli/render-options.js';
import { defaultConfig } from '../../service/config-defaults.js';
import { defaultWorkerSettings } from '../../service/worker/runtime/env.js';
import { serviceAndWorkerHelp } from '../helpers/command-help.js';

afterEach(() => {
  delete process.env.RENDERBRIDGE_TASK_LOG_MAX_BYTES;
});

async function capFrom(argv: string[]): Promise<number | undefined> {
  let seen: RenderOptions | undefined;
  const cmd = addRenderOptions(new Command('x').exitOverride().configureOutput({ writeErr: () => undefined })).action(
    (o: RenderOptions) => void (seen = o),
  );
  await cmd.parseAsync(argv, { from: 'user' });
  return defaultWorkerSettings(defaultConfig(renderConfig(seen!))).taskLogMaxBytes;
}

describe('--task-log-max-bytes', () => {
  it('defaults to 16 MiB, comes from the environment, and a flag wins over it', async () => {
    expect(await capFrom([])).toBe(16 * 2 ** 20);
    process.env.RENDERBRIDGE_TASK_LOG_MAX_BYTES = '1MiB';
    expect(await capFrom([])).toBe(2 ** 20);
    expect(await capFrom(['--task-log-max-bytes', '64KiB'])).toBe(64 * 1024);
    await expect(capFrom(['--task-log-max-bytes', 'lots'])).rejects.toThrow(/expected a size/);
  });

  it('is in the --help of service and worker', () => {
    for (const help of Object.values(serviceAndWorkerHelp())) {
      expect(help).toContain('--task-log-max-bytes <size>');
      expect(help).toContain('default: 16MiB, env: RENDERBRIDGE_TASK_LOG_MAX_BYTES');
    }
  });
});
