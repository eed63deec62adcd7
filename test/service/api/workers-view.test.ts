// GET /workers shows tenants no host names and no build paths (issue 25): they map the operator's
// machines and folders. Every API key is a tenant's; the operator's view is `renderbridge admin
// workers`, which reads the service's state database and shows both. Real HTTP, real CLI.
import { beforeAll, describe, expect, it } from 'vitest';
import { WorkerList } from '../../../shared/api/workers.js';
import { runCli } from '../../helpers/cli-run.js';
import { api } from '../../helpers/http.js';
import { useTestService } from '../../helpers/service.js';

const used = useTestService();
beforeAll(async () => {
  await used.svc.service.ports.workers!.registry.report({
    id: 'render-7:4242',
    name: 'render-7',
    hostname: 'secret-host.internal.example',
    version: '9.9.9',
    startedAt: new Date().toISOString(),
    state: 'running',
    heartbeatIntervalMs: 5000,
    slots: [
      { id: 'cpu-0', device: { kind: 'cpu', name: 'CPU', uuid: null }, state: 'idle', tasks: [], warmJobId: null },
    ],
    builds: [{ version: '4.2', path: '/opt/operator/secret/blender-4.2/blender', kind: 'release' }],
    gpus: [],
    blocklistedBy: [],
  });
});

describe('workers as a tenant and as the operator see them', () => {
  it('answers a tenant names, slots, versions and build kinds, never a host name or a path', async () => {
    const r = await api(used.svc.baseUrl, used.svc.apiKey)('GET', '/workers');
    expect(r.status).toBe(200);
    const w = WorkerList.parse(r.body).data.workers.find((x) => x.name === 'render-7')!;
    expect(w).toMatchObject({ name: 'render-7', version: '9.9.9', builds: [{ version: '4.2', kind: 'release' }] });
    expect(w.hostname).toBeUndefined();
    expect(w.builds[0]!.path).toBeUndefined();
    expect(JSON.stringify(r.body)).not.toMatch(/secret-host|\/opt\/operator/);
  });

  it('shows the operator both, read from the state database', async () => {
    const state = used.svc.config.databaseUrl
      ? ['--database-url', used.svc.config.databaseUrl]
      : ['--data-dir', used.svc.dataDir];
    const run = await runCli(['admin', 'workers', '--json', ...state], {});
    expect(run.code, run.stderr).toBe(0);
    const { workers } = JSON.parse(run.stdout) as {
      workers: { name: string; hostname?: string; builds: { path?: string }[] }[];
    };
    const w = workers.find((x) => x.name === 'render-7')!;
    expect(w.hostname).toBe('secret-host.internal.example');
    expect(w.builds[0]!.path).toBe('/opt/operator/secret/blender-4.2/blender');
  });
});
