// `--render-nice` (RENDERBRIDGE_RENDER_NICE) on the commands that run a worker: default 10, a
// flag or variable within 0-19 reaches the worker's settings, anything else is a usage error.
// That the Blender process then runs at it is test/blender/nice-matrix.test.ts.
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../cli/exit-codes.js';
import { defaultConfig } from '../../service/config-defaults.js';
import { defaultWorkerSettings } from '../../service/worker/runtime/env.js';
import { runCli } from '../helpers/cli-run.js';

describe('--render-nice', () => {
  it('defaults to 10 in the worker settings', () => {
    expect(defaultWorkerSettings(defaultConfig()).renderNice).toBe(10);
    expect(defaultWorkerSettings(defaultConfig({ renderNice: 0 })).renderNice).toBe(0);
  });

  it('takes a flag or the variable within 0-19, and refuses anything else', async () => {
    const flag = await runCli(['service', '--print-config', '--render-nice', '5'], {});
    expect(flag.stdout).toMatch(/renderNice\s+= 5\s+\(flag --render-nice\)/);
    const env = await runCli(['worker', '--print-config'], { RENDERBRIDGE_RENDER_NICE: '0' });
    expect(env.stdout).toMatch(/renderNice\s+= 0\s+\(env RENDERBRIDGE_RENDER_NICE\)/);
    const bad = await runCli(['service', '--print-config', '--render-nice', '25'], {});
    expect(bad.code).toBe(EXIT.USAGE);
    expect(bad.stderr).toContain('expected a whole number from 0 to 19, got "25"');
  }, 120_000);
});
