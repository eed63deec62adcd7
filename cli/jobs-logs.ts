// `renderbridge jobs logs ID`: the job's task logs, from GET /jobs/{id}/logs, the route of the
// task-log extension (issue 16). Services do not advertise extensions yet (no capability list in
// the API), so support is detected by the route itself: a 404 ROUTE_NOT_FOUND means this service
// has no such endpoint, which is reported as "not offered" (exit NOT_OFFERED), not as an error
// in the job.
import type { Command } from 'commander';
import { KeytarKeychain } from '../daemon/keychain/keytar.js';
import { ApiError } from '../shared/client/errors.js';
import type { ErrorBody } from '../shared/api/error-body.js';
import { CliError } from './errors.js';
import { EXIT } from './exit-codes.js';
import { cliConfig, clientProvider, withConnectionOptions, type ConnectionOptions } from './connection.js';
import { createOutput } from './output.js';
import { VERSION } from './version.js';

export function registerJobLogsCommand(jobs: Command): void {
  withConnectionOptions(
    jobs
      .command('logs')
      .description(`Print a job's task logs, where the service offers them (task-log extension); exit ${EXIT.NOT_OFFERED} where it does not`)
      .argument('<id>', 'job id'),
  ).action(async (id: string, o: ConnectionOptions) => {
    const config = cliConfig(o);
    const provider = clientProvider(config);
    // The typed call first: a wrong id, key or URL is reported exactly as by every other command.
    await (await provider.client()).getJob(id);
    const key = await apiKey();
    const url = `${config.serviceUrl}/jobs/${encodeURIComponent(id)}/logs`;
    const res = await fetch(url, { headers: { authorization: `Bearer ${key}`, accept: 'application/json, text/plain', 'user-agent': `renderbridge-cli/${VERSION}` } });
    const type = res.headers.get('content-type') ?? '';
    const body: unknown = type.includes('json') ? await res.json().catch(() => null) : await res.text();
    if (res.status === 404 && (body as ErrorBody | null)?.name === 'ROUTE_NOT_FOUND') {
      throw new CliError(`this service does not offer task logs (GET /jobs/{id}/logs answered 404 ROUTE_NOT_FOUND; task logs come with the task-log extension)`, EXIT.NOT_OFFERED, 'TASK_LOGS_NOT_OFFERED');
    }
    if (!res.ok) {
      const e = body && typeof body === 'object' ? (body as ErrorBody) : { name: 'HTTP_ERROR', message: String(body).slice(0, 500) };
      throw new ApiError('GET', url, res.status, e as ErrorBody);
    }
    const out = createOutput(o);
    out.result({ jobId: id, logs: body });
    out.line(typeof body === 'string' ? body.replace(/\n$/, '') : JSON.stringify(body, null, 2));
  });
}

/** The key the client call above just used: the tray app's keychain entry, else RENDERBRIDGE_API_KEY. */
async function apiKey(): Promise<string> {
  const fromKeychain = await new KeytarKeychain().get().catch(() => null);
  return fromKeychain?.trim() || process.env.RENDERBRIDGE_API_KEY?.trim() || '';
}
