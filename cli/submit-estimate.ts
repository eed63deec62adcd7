// `renderbridge submit PATH --estimate` (extension estimate): once the job is validated, estimate
// it with the same render request, show the estimate and ask before the render starts (`--yes`
// for scripts, which render without asking; without a terminal and without --yes, nothing is
// rendered). The render keeps the sampled frames. It is not waited for or downloaded here:
// `renderbridge jobs wait` / `jobs download` follow it.
import type { SchedulingRequest } from '../shared/api/scheduling.js';
import { createInterface } from 'node:readline/promises';
import type { RequestedRenderConfig } from '../shared/api/render-config.js';
import type { RenderJobClient } from '../shared/client/client.js';
import { CliError } from './errors.js';
import { estimateJob, estimateLines } from './estimate.js';
import { EXIT, type ExitCode } from './exit-codes.js';
import { createOutput, type OutputOptions } from './output.js';

export interface SubmitEstimateOptions extends OutputOptions {
  /** Render without asking. Default false: ask on a terminal, render nothing otherwise. */
  yes?: boolean;
  /** The render's `scheduling` (extension scheduling). Default none: the service's defaults. */
  scheduling?: SchedulingRequest;
}

/** Most seconds the estimate is waited for. */
const ESTIMATE_TIMEOUT_S = 1800;

async function ask(question: string): Promise<boolean> {
  if (!process.stdin.isTTY || !process.stdout.isTTY) return false;
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    return /^y(es)?$/i.test((await rl.question(question)).trim());
  } finally {
    rl.close();
  }
}

/** `extra` joins the --json document (the submission). */
export async function estimateThenRender(
  client: RenderJobClient,
  jobId: string,
  requested: RequestedRenderConfig,
  o: SubmitEstimateOptions,
  extra: Record<string, unknown> = {},
): Promise<ExitCode> {
  if (!(await client.hasExtension('estimate'))) {
    throw new CliError(
      `this service does not offer estimates (GET /extensions does not list the estimate extension); ` +
        `job ${jobId} is validated and not rendered`,
      EXIT.NOT_OFFERED,
      'ESTIMATE_NOT_OFFERED',
    );
  }
  const out = createOutput(o);
  const { estimate } = await estimateJob(client, jobId, requested, ESTIMATE_TIMEOUT_S);
  for (const line of estimateLines(estimate)) out.line(line);
  const ok = estimate.state === 'ready';
  const render = ok && (o.yes === true || (!o.json && !o.quiet && (await ask('Render it now? [y/N] '))));
  if (render)
    await client.renderJob(jobId, {
      requestedRenderConfig: requested,
      ...(o.scheduling ? { scheduling: o.scheduling } : {}),
    });
  out.result({ ...extra, jobId, estimate, rendered: render }, ok ? EXIT.OK : EXIT.FAILURE);
  if (render)
    out.line(
      `Job ${jobId} is rendering (the sampled frames are kept). Follow it with: renderbridge jobs ` +
        `watch ${jobId}; fetch it with: renderbridge jobs download ${jobId}`,
    );
  else if (ok)
    out.line(
      `Job ${jobId} stays validated, not rendered; a render with the same settings (POST ` +
        `/jobs/${jobId}/render) keeps the sampled frames.`,
    );
  return ok ? EXIT.OK : EXIT.FAILURE;
}
