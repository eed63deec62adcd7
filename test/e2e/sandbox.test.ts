// A hostile project: its bundled add-on (which the render enables, so its code runs even with
// -Y) tries what a tenant who wants the farm would try, and prints what it got. Inside the
// sandbox every attempt fails: the worker's environment (a canary secret, the farm's URLs), another
// job's folder, the service's data folder, the service's port, PostgreSQL and Redis on the host's
// loopback, and a file outside the job's folder. The job still renders, and the service keeps
// serving. The same probes run by plain Python outside the sandbox reach what they aim at (so the
// checks can fail). A farm that turns bundled add-ons off (`--bundled-addons off`, the default
// with --no-sandbox) never runs them and says so; a .blend's own auto-run script and Python driver
// never run at all. Real service, worker, Blender and bubblewrap.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildFixture, fixtureMarker } from '../helpers/fixtures.js';
import { startE2E, submit, tinyRender, validationOutcome, workDirOf, type E2E } from '../helpers/e2e.js';

const run = promisify(execFile);
const CANARY = 'RB_TEST_CANARY_SECRET';

// Reads its targets from targets.json beside itself; prints one RB_EVIL line with what each try got.
const EVIL = `bl_info = {"name": "Evil", "blender": (3, 0, 0), "category": "Render"}
import json, os, socket

def _try(fn):
    try:
        return ['ok', fn()]
    except Exception as e:
        return ['refused', type(e).__name__]

def _connect(port):
    s = socket.socket()
    s.settimeout(2)
    s.connect(('127.0.0.1', port))
    s.close()
    return port

def _write(path):
    with open(path, 'w') as f:
        f.write('escaped')
    return path

def register():
    t = json.load(open(os.path.join(os.path.dirname(__file__), 'targets.json')))
    out = {
        'env': {k: v for k, v in os.environ.items() if k in t['envKeys']},
        'otherJob': _try(lambda: os.listdir(t['otherJob'])),
        'dataDir': _try(lambda: os.listdir(t['dataDir'])),
        'database': _try(lambda: open(t['database'], 'rb').read(16).hex()),
        'service': _try(lambda: _connect(t['servicePort'])),
        'postgres': _try(lambda: _connect(5432)),
        'redis': _try(lambda: _connect(6379)),
        'outside': _try(lambda: _write(t['outside'])),
        'home': os.environ.get('HOME'),
    }
    print('RB_EVIL ' + json.dumps(out), flush=True)

def unregister():
    pass
`;

let e2e: E2E;
let scratch: string;
let outside: string;

beforeAll(async () => {
  process.env[CANARY] = 'do-not-leak';
  scratch = await mkdtemp(path.join(tmpdir(), 'rb-e2e-sandbox-'));
  outside = path.join(scratch, 'escaped.txt');
  e2e = await startE2E();
}, 120_000);
afterAll(async () => {
  delete process.env[CANARY];
  await e2e?.svc.close();
  await rm(scratch, { recursive: true, force: true });
});

async function evilProject(farm: E2E, otherJob: string): Promise<string> {
  const project = path.join(scratch, 'project');
  await mkdir(path.join(project, 'addons', 'evil'), { recursive: true });
  await copyFile(await buildFixture('basic'), path.join(project, 'scene.blend'));
  await writeFile(path.join(project, 'addons', 'evil', '__init__.py'), EVIL);
  const targets = {
    envKeys: [CANARY, 'DATABASE_URL', 'REDIS_URL', 'RENDERBRIDGE_WORKER_TOKEN', 'AWS_SECRET_ACCESS_KEY'],
    otherJob,
    dataDir: farm.svc.dataDir,
    database: path.join(farm.svc.dataDir, 'renderbridge.sqlite'),
    servicePort: Number(new URL(farm.svc.origin).port),
    outside,
  };
  await writeFile(path.join(project, 'addons', 'evil', 'targets.json'), JSON.stringify(targets));
  const manifest = {
    version: 1,
    sceneFile: 'scene.blend',
    addons: [{ id: 'evil', name: 'Evil', path: 'addons/evil' }],
  };
  await writeFile(path.join(project, 'renderbridge-manifest.json'), JSON.stringify(manifest));
  const zip = path.join(scratch, 'evil.zip');
  await run('zip', ['-q', '-r', zip, '.'], { cwd: project });
  return zip;
}

/** Submits the attack to `farm` and renders it; the job's whole log, and the two job ids. */
async function attack(farm: E2E): Promise<{ log: string; id: string; victim: string; warnings: string[] }> {
  const { client } = farm;
  // Another tenant's job whose folder the attacker names.
  const victim = await submit(client, await buildFixture('basic'));
  await validationOutcome(client, victim);
  const otherJob = workDirOf(farm.svc, victim);
  expect(existsSync(otherJob)).toBe(true);

  const id = await submit(client, await evilProject(farm, otherJob));
  const validated = await validationOutcome(client, id);
  expect(validated.status).toBe('validated');
  const warnings = (validated.analysis?.output?.analysisWarnings ?? []).map((w) => `${w.code}: ${w.message}`);
  await client.renderJob(id, tinyRender('1'));
  const done = await client.waitForStatus(id, ['completed', 'failed'], { intervalMs: 200, timeoutMs: 120_000 });
  expect(done.status).toBe('completed');
  let log = '';
  for await (const text of client.jobLogs(id)) log += text;
  return { log, id, victim, warnings };
}

/** What the add-on reported (its RB_EVIL line). */
function report(text: string): Record<string, unknown> {
  const line = text.split('\n').find((l) => l.includes('RB_EVIL '));
  expect(line, 'the add-on ran and reported').toBeDefined();
  return JSON.parse(line!.slice(line!.indexOf('RB_EVIL ') + 8)) as Record<string, unknown>;
}

describe('a project whose bundled add-on attacks the farm', () => {
  it('reaches nothing outside its own job folder, and the job renders', { timeout: 240_000 }, async () => {
    const { log, id, victim } = await attack(e2e);
    const got = report(log);
    const { client } = e2e;
    expect(got.env).toEqual({});
    // The service's data folder shows only the empty path down to this job's folder, none of its files.
    const data = got.dataDir as [string, string[] | string];
    expect(
      data[0] === 'refused' || (Array.isArray(data[1]) && data[1].every((n) => n === 'work')),
      JSON.stringify(data),
    ).toBe(true);
    expect(existsSync(path.join(e2e.svc.dataDir, 'renderbridge.sqlite'))).toBe(true);
    for (const key of ['otherJob', 'database', 'service', 'postgres', 'redis', 'outside']) {
      expect((got[key] as string[])[0], `${key}: ${JSON.stringify(got[key])}`).toBe('refused');
    }
    expect(existsSync(outside)).toBe(false);
    // HOME is in the job's own folder (the log shows worker folders as <worker>), not the worker's.
    expect(String(got.home)).toBe(`<worker>/${id}/.blender-home`);
    // The service kept serving the other tenant.
    expect((await client.getJob(victim)).status).toBe('validated');
  });

  it(
    'control: the same probes, run by plain Python outside the sandbox, read another job and reach the service',
    { timeout: 240_000 },
    async () => {
      const victim = await submit(e2e.client, await buildFixture('basic'));
      await validationOutcome(e2e.client, victim);
      const otherJob = workDirOf(e2e.svc, victim);
      const zip = await evilProject(e2e, otherJob);
      const unpacked = path.join(scratch, 'unpacked');
      await mkdir(unpacked, { recursive: true });
      await run('unzip', ['-q', '-o', zip, '-d', unpacked]);
      const { stdout } = await run(
        'python3',
        [
          '-c',
          'import sys; sys.path.insert(0, sys.argv[1]); import evil; evil.register()',
          path.join(unpacked, 'addons'),
        ],
        {
          env: { ...process.env },
        },
      );
      const got = report(stdout);
      expect((got.otherJob as string[])[0]).toBe('ok');
      expect((got.service as string[])[0]).toBe('ok');
      expect((got.database as string[])[0]).toBe('ok');
      expect(got.env).toMatchObject({ [CANARY]: 'do-not-leak' });
    },
  );

  it(
    'a farm with bundled add-ons off (the default with --no-sandbox) never runs them, says so, and renders',
    { timeout: 240_000 },
    async () => {
      const open = await startE2E({ sandbox: false });
      try {
        const { log, warnings } = await attack(open);
        expect(log).not.toContain('RB_EVIL ');
        const refused = warnings.find((w) => w.startsWith('ADDON_REFUSED: '));
        expect(refused).toMatch(/bundles add-ons this farm does not run: Evil \(evil\)/);
        expect(refused).toMatch(/--bundled-addons off/);
      } finally {
        await open.svc.close();
      }
    },
  );
});

describe('a .blend whose own Python would run with auto-exec', () => {
  it(
    'runs neither its auto-run text block nor its Python driver, warns, and renders',
    { timeout: 240_000 },
    async () => {
      const { client } = e2e;
      const marker = fixtureMarker();
      await rm(marker, { force: true });
      await rm(`${marker}.driver`, { force: true });
      const id = await submit(client, await buildFixture('autoexec'));
      const validated = await validationOutcome(client, id);
      expect(validated.status).toBe('validated');
      expect(validated.analysis?.output?.analysisWarnings?.map((w) => w.code)).toContain('AUTOEXEC_DISABLED');
      await client.renderJob(id, tinyRender('1'));
      const done = await client.waitForStatus(id, ['completed', 'failed'], { intervalMs: 200, timeoutMs: 120_000 });
      expect(done.status).toBe('completed');
      // The fixture's scripts write these files when they run (outside the job folder, too).
      expect(existsSync(marker)).toBe(false);
      expect(existsSync(`${marker}.driver`)).toBe(false);
    },
  );
});
