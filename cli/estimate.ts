// `renderbridge estimate ID` (extension estimate): what rendering a validated job would take on
// the farm now (time, cost, memory, size, with bands), from sample frames rendered on it. Waits
// until the estimate is ready (or failed) unless --no-wait; repeating the command answers the same
// estimate; --cancel cancels one that samples. A service without the extension is "not offered".
import type { Command } from 'commander';
import type { RenderJobClient } from '../shared/client/client.js';
import type { Estimate, EstimateBand } from '../shared/api/estimate.js';
import type { RequestedRenderConfig } from '../shared/api/render-config.js';
import { formatBytes } from './display.js';
import { CliError } from './errors.js';
import { EXIT } from './exit-codes.js';
import { cliConfig, clientProvider, withConnectionOptions, type ConnectionOptions } from './connection.js';
import { createOutput } from './output.js';
import { overrideSettings, withRenderOverrides, type RenderOverrides } from './submit-overrides.js';
import { formatDuration } from './watch-view.js';

interface EstimateOptions extends ConnectionOptions, RenderOverrides {
  frames: string[];
  camera?: string;
  viewLayer?: string;
  wait: boolean;
  cancel?: boolean;
  /** Most seconds to wait for the estimate. Default 1800. */
  timeout: number;
}

const collect = (v: string, prev: string[]) => [
  ...prev,
  ...v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
];

/** `1m20s (1m05s-1m40s)`, or with `fmt` for other units. */
export function bandText(b: EstimateBand, fmt: (n: number) => string = formatDuration): string {
  return `${fmt(b.value)} (${fmt(b.low)}-${fmt(b.high)})`;
}

/** The human lines of an estimate. */
export function estimateLines(e: Estimate): string[] {
  const from = e.sampleFrames.length ? `, from frames ${e.sampleFrames.join(', ')}` : '';
  const head = `Estimate of job ${e.jobId}: ${e.state}${from}.`;
  if (e.state === 'failed') return [head, e.reason ?? 'It could not be made.'];
  const f = e.figures;
  if (!f) return [head, 'No sample frame is measured yet.'];
  const money = (n: number) => n.toFixed(2);
  const lines = [
    head,
    `  Wall time on this farm now: ${bandText(f.wallSeconds)} for ${f.framesToRender} frames left (rests ` +
      `on ${f.wallSeconds.frames} frames)`,
    `  Compute: ${bandText(f.renderSeconds)} ` +
      `on ${f.device}; ${bandText(f.normalizedSeconds, (n) => `${Math.round(n)}`)} normalized seconds`,
    `  Cost: ${f.cost ? bandText(f.cost, money) : 'no price configured'}`,
    `  ${f.memory.summary}`,
    ...(f.outputBytes ? [`  Output: ${bandText(f.outputBytes, (n) => formatBytes(Math.round(n)))}`] : []),
    ...(f.loadSeconds ? [`  Scene load: ${bandText(f.loadSeconds, (n) => `${n.toFixed(1)}s`)}`] : []),
    `  The estimate itself: ${e.ownCost.renderSeconds.toFixed(1)}s of ` +
      `rendering${e.ownCost.cost !== null ? `, cost ${money(e.ownCost.cost)}` : ''}`,
  ];
  return [...lines, ...e.warnings.map((w) => `  Warning: ${w}`)];
}

/**
 * Starts (or replays) the job's estimate of `requested` and waits up to `timeoutS` seconds until
 * it is no longer sampling (0: answers it as it is); past that, a TIMEOUT error.
 */
export async function estimateJob(
  client: RenderJobClient,
  id: string,
  requested: RequestedRenderConfig,
  timeoutS: number,
): Promise<{ estimate: Estimate; replay: boolean }> {
  const started = await client.startEstimate(id, { requestedRenderConfig: requested });
  let estimate = started.estimate;
  const deadline = Date.now() + timeoutS * 1000;
  while (timeoutS > 0 && estimate.state === 'sampling') {
    if (Date.now() > deadline)
      throw new CliError(
        `the estimate was not ready within ${timeoutS}s: read it later with renderbridge estimate ${id} --no-wait`,
        EXIT.TIMEOUT,
        'TIMEOUT',
      );
    await new Promise((r) => setTimeout(r, 1000));
    estimate = await client.getEstimate(id);
  }
  return { estimate, replay: started.replay };
}

export function registerEstimateCommand(program: Command): void {
  withConnectionOptions(
    withRenderOverrides(
      program
        .command('estimate')
        .description(
          `Estimate what rendering a validated job takes on this farm now (time, cost, peak memory, output ` +
            `size, with bands) from sample frames rendered on it and kept for the render; ` +
            `exit ${EXIT.NOT_OFFERED} where the service does not offer it`,
        )
        .argument('<id>', 'job id (validated)')
        .option(
          '--frames <ranges>',
          "frames the render would render, e.g. 1-250 (repeatable; default: the file's range)",
          collect,
          [],
        )
        .option('--camera <name>', 'camera object the render would use (default: the scene camera)')
        .option('--view-layer <name>', 'view layer the render would use (default: every enabled layer)')
        .option('--no-wait', 'print the estimate as it is now instead of waiting until it is ready')
        .option('--timeout <seconds>', 'most seconds to wait (default 1800)', Number, 1800)
        .option('--cancel', "cancel the job's estimate while it samples"),
    ),
  ).action(async (id: string, o: EstimateOptions) => {
    if (o.scene !== undefined)
      throw new CliError('--scene is chosen when a job is validated, not when it is estimated', EXIT.USAGE, 'USAGE');
    const client = await clientProvider(cliConfig(o)).client();
    await client.getJob(id);
    if (!(await client.hasExtension('estimate'))) {
      throw new CliError(
        'this service does not offer estimates (GET /extensions does not list the estimate extension)',
        EXIT.NOT_OFFERED,
        'ESTIMATE_NOT_OFFERED',
      );
    }
    const out = createOutput(o);
    let estimate: Estimate;
    let replay = false;
    if (o.cancel) {
      estimate = await client.cancelEstimate(id);
    } else {
      const requested: RequestedRenderConfig = {
        colorManagementPreset: 'default',
        ...overrideSettings(o).renderConfig,
        ...(o.frames.length ? { frameRanges: o.frames } : {}),
        ...(o.camera ? { activeCamera: o.camera } : {}),
        ...(o.viewLayer ? { activeViewLayer: o.viewLayer } : {}),
      };
      ({ estimate, replay } = await estimateJob(client, id, requested, o.wait ? o.timeout : 0));
    }
    const code = estimate.state === 'failed' ? EXIT.FAILURE : EXIT.OK;
    out.result({ estimate, replay }, code);
    for (const line of estimateLines(estimate)) out.line(line);
    if (estimate.state === 'ready')
      out.line(`render it (the sampled frames are kept): the same settings with POST /jobs/${id}/render`);
    // Said already, in the document or the lines: only the exit code is left to set.
    process.exitCode = code;
  });
}
