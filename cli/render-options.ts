// How render slots run Blender, on every command that runs a worker (`service` with its in-process
// worker, and `worker`): warm processes (the default) or one Blender per chunk, and when idle warm
// processes are ended. Each also reads an environment variable, so systemd units need no flags.
import { InvalidArgumentError, Option, type Command } from 'commander';
import type { ServiceConfig } from '../service/config.js';
import { parseByteSize } from './unpack-options.js';

export interface RenderOptions {
  renderMode: ServiceConfig['renderMode'];
  warmIdle: number;
  warmMinFreeMemory: number;
  taskLogMaxBytes: number;
}

function parseSeconds(v: string): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0 || v.trim() === '')
    throw new InvalidArgumentError(`expected seconds (a number >= 0), got "${v}"`);
  return n;
}

export function addRenderOptions(cmd: Command): Command {
  return cmd
    .addOption(
      new Option(
        '--render-mode <mode>',
        'warm: one Blender per slot and job keeps the scene loaded and renders the frames it claims; ' +
          'chunked: one Blender per chunk of frames',
      )
        .env('RENDERBRIDGE_RENDER_MODE')
        .choices(['warm', 'chunked'])
        .default('warm'),
    )
    .addOption(
      new Option(
        '--warm-idle <seconds>',
        'how long a warm Blender with no frame to render waits for more of its job before it is ended',
      )
        .env('RENDERBRIDGE_WARM_IDLE')
        .argParser(parseSeconds)
        .default(60),
    )
    .addOption(
      new Option(
        '--warm-min-free-memory <size>',
        'idle warm Blenders are ended while the memory available (MemAvailable) is below this (bytes, or e.g. 4GiB)',
      )
        .env('RENDERBRIDGE_WARM_MIN_FREE_MEMORY')
        .argParser(parseByteSize)
        .default(2 ** 30, '1GiB'),
    )
    .addOption(
      new Option(
        '--task-log-max-bytes <size>',
        "most bytes of each task run's log kept: its first and last halves, the middle counted as omitted " +
          '(bytes, or e.g. 16MiB)',
      )
        .env('RENDERBRIDGE_TASK_LOG_MAX_BYTES')
        .argParser(parseByteSize)
        .default(16 * 2 ** 20, '16MiB'),
    );
}

/** The render part of a ServiceConfig. */
export function renderConfig(o: RenderOptions): Partial<ServiceConfig> {
  return {
    renderMode: o.renderMode,
    warmIdleSeconds: o.warmIdle,
    warmMinFreeMemoryBytes: o.warmMinFreeMemory,
    taskLogMaxBytes: o.taskLogMaxBytes,
  };
}
