// `renderbridge admin workers`: the operator's view of the farm's workers, read from the service's
// state database (the data folder or --database-url) rather than the API. It is the one view with
// host names and Blender build paths: GET /workers answers every API key, and a tenant's key must
// not map the operator's machines and folders. Every job is named by id (the operator sees all).
import type { Command } from 'commander';
import { jobIdsOf, presentWorkers } from '../service/domain/workers.js';
import { addStateOptions, openAdminState, type AdminStateOptions } from './admin-state.js';
import { workerLines } from './workers.js';

export function registerAdminWorkersCommand(admin: Command): void {
  addStateOptions(
    admin
      .command('workers')
      .description(
        "List the farm's workers as the operator sees them: with host names and Blender build paths (GET " +
          '/workers shows API keys neither)',
      )
      .option('--json', 'print JSON for scripts'),
  ).action(async (o: AdminStateOptions & { json?: boolean }) => {
    const state = await openAdminState(o);
    try {
      const records = await state.workers.listWorkers();
      const everyJob = new Map([...jobIdsOf(records)].map((id) => [id, null] as const));
      const workers = presentWorkers(records, everyJob, Date.now(), { operator: true });
      if (o.json) {
        process.stdout.write(`${JSON.stringify({ workers }, null, 2)}\n`);
        return;
      }
      if (workers.length === 0) console.log('No worker has reported in the last day.');
      for (const w of workers) for (const l of workerLines(w)) console.log(l);
    } finally {
      await state.close();
    }
  });
}
