import type { Command } from 'commander';
import { createApiKey } from '../service/domain/api-keys.js';
import type { KeyStore } from '../service/ports/keys.js';
import { addStateOptions, openAdminState, type AdminStateOptions } from './admin-state.js';
import { registerWebhookCommands } from './webhook-commands.js';
import { registerWorkerTokenCommands } from './worker-token-commands.js';
import { registerAdminWorkersCommand } from './admin-workers.js';
import { registerShareWeightCommands } from './admin-share-weights.js';

/** Runs `fn` on the key store of the service's existing database (see openAdminState). */
async function withKeys<T>(o: AdminStateOptions, fn: (keys: KeyStore) => Promise<T>): Promise<T> {
  const state = await openAdminState(o);
  try {
    return await fn(state.keys);
  } finally {
    await state.close();
  }
}

export function registerAdminCommands(program: Command): void {
  const admin = program
    .command('admin')
    .description('Manage workspaces, API keys and worker tokens of a reference service data folder');

  addStateOptions(
    admin
      .command('create-key')
      .description('Create an API key (the workspace is created when new); the key is printed once, on the last line')
      .requiredOption('--workspace <name>', 'workspace the key gives access to')
      .requiredOption('--label <text>', 'what the key is for, e.g. "Anna\'s Blender"')
      .option('--user <name>', 'user the key acts as', 'admin'),
    { init: true },
  ).action(async (o: AdminStateOptions & { workspace: string; label: string; user: string }) => {
    const { key, record } = await withKeys(o, (keys) =>
      createApiKey(keys, { workspace: o.workspace, label: o.label, user: o.user }),
    );
    console.error(`Created key ${record.id} for workspace "${record.workspaceName}" (${record.label}).`);
    console.error('Store it in a secrets manager now: it is shown only this once.');
    process.stdout.write(`${key}\n`);
  });

  addStateOptions(
    admin
      .command('list-keys')
      .description('List API keys (never the keys themselves)')
      .option('--workspace <name>', 'only this workspace')
      .option('--json', 'print JSON for scripts'),
  ).action(async (o: AdminStateOptions & { workspace?: string; json?: boolean }) => {
    const list = await withKeys(o, (keys) => keys.listKeys(o.workspace));
    if (o.json) {
      process.stdout.write(`${JSON.stringify(list, null, 2)}\n`);
      return;
    }
    if (list.length === 0) {
      console.log('No API keys. Create one with: renderbridge admin create-key --workspace NAME --label TEXT');
      return;
    }
    for (const k of list) {
      const state = k.revokedAt ? `revoked ${k.revokedAt}` : 'active';
      console.log(`${k.id}  ${k.displayPrefix}…  ${k.workspaceName}  "${k.label}"  created ${k.createdAt}  ${state}`);
    }
  });

  addStateOptions(
    admin
      .command('revoke-key')
      .description('Revoke an API key: its next request gets 401')
      .argument('<id>', 'key id, as shown by list-keys'),
  ).action(async (id: string, o: AdminStateOptions) => {
    const ok = await withKeys(o, (keys) => keys.revokeKey(id));
    if (!ok) throw new Error(`no active key with id ${id}: see renderbridge admin list-keys`);
    console.log(`Revoked key ${id}.`);
  });

  registerWebhookCommands(admin);
  registerWorkerTokenCommands(admin);
  registerAdminWorkersCommand(admin);
  registerShareWeightCommands(admin);
}
