// `renderbridge admin create-worker-token`, `list-worker-tokens` and `revoke-worker-token`:
// per-worker credentials of the internal worker API, stored hashed in the service's database.
// A running service looks each token up on every call, so a revoke needs no restart.
import { InvalidArgumentError, type Command } from 'commander';
import { createWorkerToken, workerNameProblem } from '../service/domain/worker-tokens.js';
import type { WorkerTokenAdmin } from '../service/ports/worker-tokens.js';
import { addStateOptions, openAdminState, type AdminStateOptions } from './admin-state.js';
import { CliError } from './errors.js';

/** Runs `fn` on the worker tokens of the service's existing database (see openAdminState). */
async function withTokens<T>(o: AdminStateOptions, fn: (store: WorkerTokenAdmin) => Promise<T>): Promise<T> {
  const state = await openAdminState(o);
  try {
    return await fn(state.workerTokens);
  } finally {
    await state.close();
  }
}

function parseWorkerName(v: string): string {
  const problem = workerNameProblem(v);
  if (problem) throw new InvalidArgumentError(problem);
  return v;
}

export function registerWorkerTokenCommands(admin: Command): void {
  addStateOptions(
    admin
      .command('create-worker-token')
      .description(
        'Create the token of one render worker (renderbridge worker --service-url); printed once, on the last line',
      )
      .requiredOption(
        '--name <name>',
        'the worker it identifies: its leases and heartbeats carry this name',
        parseWorkerName,
      ),
    { init: true },
  ).action(async (o: AdminStateOptions & { name: string }) => {
    const { token, record } = await withTokens(o, async (store) => {
      try {
        return await createWorkerToken(store, o.name);
      } catch (err) {
        if ((err as Error).name === 'WorkerTokenNameTaken') throw new CliError((err as Error).message);
        throw err;
      }
    });
    console.error(`Created worker token ${record.id} for worker "${record.name}".`);
    console.error(`Give it to that worker only, as RENDERBRIDGE_WORKER_TOKEN; it is shown only this once.`);
    process.stdout.write(`${token}\n`);
  });

  addStateOptions(
    admin
      .command('list-worker-tokens')
      .description('List worker tokens (never the tokens themselves)')
      .option('--json', 'print JSON for scripts'),
  ).action(async (o: AdminStateOptions & { json?: boolean }) => {
    const list = await withTokens(o, (store) => store.listWorkerTokens());
    if (o.json) {
      process.stdout.write(`${JSON.stringify(list, null, 2)}\n`);
      return;
    }
    if (list.length === 0) {
      console.log('No worker tokens. Create one per worker with: renderbridge admin create-worker-token --name NAME');
      return;
    }
    for (const t of list) {
      const state = t.revokedAt ? `revoked ${t.revokedAt}` : 'active';
      console.log(
        `${t.id}  ${t.displayPrefix}…  ${t.name}  created ${t.createdAt}  last ` +
          `used ${t.lastUsedAt ?? 'never'}  ${state}`,
      );
    }
  });

  addStateOptions(
    admin
      .command('revoke-worker-token')
      .description('Revoke a worker token: its next worker API call gets 401')
      .argument('<id-or-name>', 'token id or worker name, as shown by list-worker-tokens'),
  ).action(async (idOrName: string, o: AdminStateOptions) => {
    const revoked = await withTokens(o, (store) => store.revokeWorkerToken(idOrName));
    if (!revoked)
      throw new CliError(
        `no active worker token with id or name "${idOrName}": see renderbridge admin list-worker-tokens`,
      );
    console.log(`Revoked worker token ${revoked.id} of worker "${revoked.name}".`);
  });
}
