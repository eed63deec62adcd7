// The add-on's daemon client (host-addon/renderbridge/daemon_client.py) against the real bridge
// daemon: this starts a reference service and four daemons with every real part (one with the
// service's API key, one with none, one with a key the service refuses, one whose farm URL nothing
// answers), builds a .blend and creates a job, then runs
// test_daemon_client.py with the system python3, their state files and ids in its environment.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningBridgeDaemon } from '../../daemon/assemble.js';
import { DAEMON_ROUTES } from '../../shared/daemon/api.js';
import { daemonCall, startTestBridge } from '../daemon/harness.js';
import { waitUntil } from '../helpers/e2e.js';
import { buildFixture } from '../helpers/fixtures.js';
import { createJob } from '../helpers/flow.js';
import { api } from '../helpers/http.js';
import { startTestService, type TestService } from '../helpers/service.js';

const run = promisify(execFile);
const SCRIPT = fileURLToPath(new URL('./test_daemon_client.py', import.meta.url));

let svc: TestService;
let work: string;
const daemons: RunningBridgeDaemon[] = [];

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'rb-addon-client-'));
  svc = await startTestService();
}, 60_000);
afterAll(async () => {
  for (const d of daemons) await d.close();
  await svc?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

/** A bridge daemon whose state file lies where the add-on looks for it under `work/<name>` as XDG_STATE_HOME. */
async function bridge(name: string, apiKey: string, serviceUrl = svc.baseUrl): Promise<RunningBridgeDaemon> {
  const dir = path.join(work, name);
  const d = await startTestBridge({ serviceUrl, apiKey, work: dir, stateDir: path.join(dir, 'xdg', 'renderbridge') });
  daemons.push(d);
  return d;
}

describe('host-addon/renderbridge/daemon_client.py', () => {
  it('passes its python unit tests against the real daemon', async () => {
    const keyed = await bridge('keyed', svc.apiKey);
    const keyless = await bridge('keyless', ''); // '' reads as no key configured
    const wrongKey = await bridge('wrongkey', 'rb_live_not-a-key-of-this-service-000000000');
    // Nothing listens on port 9.
    const noFarm = await bridge('nofarm', svc.apiKey, 'http://127.0.0.1:9/api/external/v1');
    const blend = await buildFixture('basic');
    const job = await createJob(api(svc.baseUrl, svc.apiKey));
    // The python test lists the daemon's jobs: wait until its tracker has seen this one.
    await waitUntil('the job in GET /jobs', async () => {
      const res = await daemonCall(keyed)('GET', '/jobs');
      return DAEMON_ROUTES.listJobs.response.parse(res.json).jobs.some((t) => t.job.id === job.id);
    });
    const env = {
      ...process.env,
      RB_TEST_DAEMON_STATE: keyed.stateFile,
      RB_TEST_KEYLESS_STATE: keyless.stateFile,
      RB_TEST_BLEND: blend,
      RB_TEST_JOB_ID: job.id,
      RB_TEST_SERVICE_URL: svc.baseUrl,
      RB_TEST_WRONGKEY_STATE: wrongKey.stateFile,
      RB_TEST_NOFARM_STATE: noFarm.stateFile,
    };
    const { stderr } = await run('python3', [SCRIPT, '-v'], { env, timeout: 120_000 }).catch(
      (err: { stderr?: string; stdout?: string }) => {
        throw new Error(`python tests failed:\n${err.stdout ?? ''}${err.stderr ?? ''}`);
      },
    );
    expect(stderr).toMatch(/\nOK\s*$/);
    expect(stderr).toMatch(/Ran ([1-9]\d*) tests/);
    expect(stderr, 'every test ran against the daemon').not.toMatch(/skipped/i);
  }, 180_000);
});
