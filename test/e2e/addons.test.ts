// Bundled add-ons: a project zip carries an add-on and the packer's manifest; validation
// selects it (all bundled add-ons by default, or none when the client says so), and the render
// runs with it enabled. The probe add-on makes the film transparent, which shows in the pixels.
import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildFixture } from '../helpers/fixtures.js';
import { fetchBytes, startE2E, submit, tinyRender, validationOutcome, type E2E } from '../helpers/e2e.js';

const run = promisify(execFile);
let e2e: E2E;
let scratch: string;
let zip: string;
let brokenZip: string;
let nodesZip: string;

const ADDON = `bl_info = {"name": "RB Film Probe", "blender": (3, 0, 0), "category": "Render"}
import bpy

def _transparent(scene, *_):
    # Visible in the output: a transparent background instead of the world colour.
    scene.render.film_transparent = True

def register():
    # bpy.data is off limits while add-ons register: act when a frame renders.
    bpy.app.handlers.render_pre.append(_transparent)

def unregister():
    bpy.app.handlers.render_pre.remove(_transparent)
`;

beforeAll(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'rb-e2e-addons-'));
  const project = path.join(scratch, 'project');
  await mkdir(path.join(project, 'addons', 'rb_film_probe'), { recursive: true });
  await copyFile(await buildFixture('basic'), path.join(project, 'scene.blend'));
  await writeFile(path.join(project, 'addons', 'rb_film_probe', '__init__.py'), ADDON);
  const manifest = {
    version: 1,
    sceneFile: 'scene.blend',
    addons: [{ id: 'rb_film_probe', name: 'RB Film Probe', path: 'addons/rb_film_probe' }],
  };
  await writeFile(path.join(project, 'renderbridge-manifest.json'), JSON.stringify(manifest));
  zip = path.join(scratch, 'project.zip');
  await run('zip', ['-q', '-r', zip, '.'], { cwd: project });
  // A second project whose add-on fails to register.
  await writeFile(
    path.join(project, 'addons', 'rb_film_probe', '__init__.py'),
    `${ADDON}\nraise RuntimeError('probe add-on is broken')\n`,
  );
  brokenZip = path.join(scratch, 'broken.zip');
  await run('zip', ['-q', '-r', brokenZip, '.'], { cwd: project });
  // A file saved with the rb_test_nodes add-on (its builder writes the add-on beside it), bundled.
  const nodes = path.join(scratch, 'nodes');
  const nodesBlend = await buildFixture('addon-nodes');
  await mkdir(path.join(nodes, 'addons'), { recursive: true });
  await copyFile(nodesBlend, path.join(nodes, 'scene.blend'));
  await copyFile(
    path.join(path.dirname(nodesBlend), 'rb_test_nodes.py'),
    path.join(nodes, 'addons', 'rb_test_nodes.py'),
  );
  const nodesManifest = {
    version: 1,
    sceneFile: 'scene.blend',
    addons: [{ id: 'rb_test_nodes', name: 'RB Test Nodes', path: 'addons/rb_test_nodes.py' }],
  };
  await writeFile(path.join(nodes, 'renderbridge-manifest.json'), JSON.stringify(nodesManifest));
  nodesZip = path.join(scratch, 'nodes.zip');
  await run('zip', ['-q', '-r', nodesZip, '.'], { cwd: nodes });
  e2e = await startE2E();
}, 120_000);
afterAll(async () => {
  await e2e?.svc.close();
  await rm(scratch, { recursive: true, force: true });
});

/** The smallest alpha value of a PNG (255 = fully opaque everywhere). */
async function minAlpha(png: Buffer): Promise<number> {
  const file = path.join(scratch, `a-${Date.now()}.png`);
  await writeFile(file, png);
  const { stdout } = await run(
    'ffmpeg',
    ['-v', 'error', '-i', file, '-vf', 'alphaextract', '-f', 'rawvideo', '-pix_fmt', 'gray', '-'],
    {
      encoding: 'buffer',
      maxBuffer: 1 << 20,
    },
  );
  return Math.min(...(stdout as unknown as Buffer));
}

async function renderFirstFrame(jobId: string): Promise<Buffer> {
  const { client } = e2e;
  await client.renderJob(jobId, tinyRender('1', { outputSettings: { colorMode: 'RGBA' } }));
  const done = await client.waitForStatus(jobId, ['completed', 'failed'], { intervalMs: 150, timeoutMs: 90_000 });
  expect(done.failedReason ?? null).toBeNull();
  const frames = (await client.getDownloads(jobId)).frameOutputs ?? [];
  return fetchBytes(frames[0]!.url);
}

describe('bundled add-ons', () => {
  it('enables the bundled add-on by default, and leaves it out when the client selects none', async () => {
    const { client } = e2e;
    const withAddon = await validationOutcome(client, await submit(client, zip));
    expect(withAddon.status).toBe('validated');
    expect(withAddon.analysis?.config).toMatchObject({
      pathToFileForRender: 'scene.blend',
      addonsToUse: [{ id: 'rb_film_probe', name: 'RB Film Probe' }],
      bundledAddonPathsToUse: ['addons/rb_film_probe'],
    });
    const without = await validationOutcome(
      client,
      await submit(client, zip, { addonsToUse: [], bundledAddonPathsToUse: [] }),
    );
    expect(without.analysis?.config).toMatchObject({ addonsToUse: [], bundledAddonPathsToUse: [] });

    expect(await minAlpha(await renderFirstFrame(withAddon.id))).toBe(0);
    expect(await minAlpha(await renderFirstFrame(without.id))).toBe(255);
  }, 180_000);

  it(
    "analysis.output.addons describes each file: what its data needs plus the pack's add-ons, never the " +
      "worker's own",
    async () => {
      const { client } = e2e;
      const ids = {
        plain: await submit(client, await buildFixture('basic')),
        probe: await submit(client, zip),
        nodes: await submit(client, nodesZip),
        sun: await submit(client, await buildFixture('addon-sun')),
      };
      const out = async (id: string) => (await validationOutcome(client, id)).analysis?.output;
      const required = (o: Awaited<ReturnType<typeof out>>) =>
        o?.analysisWarnings?.filter((w) => w.code === 'ADDON_REQUIRED') ?? [];
      const plain = await out(ids.plain);
      expect(plain?.addons).toEqual([]);
      expect(required(plain)).toEqual([]);
      // basic.blend needs nothing; the pack bundles the film probe.
      const probe = await out(ids.probe);
      expect(probe?.addons).toEqual(['rb_film_probe']);
      expect(required(probe)).toEqual([]);
      // The node tree, node and scene property group are all found in the bundled add-on's source.
      const nodes = await out(ids.nodes);
      expect(nodes?.addons).toEqual(['rb_test_nodes']);
      expect(required(nodes)).toEqual([]);
      // Blender's own add-on, off with factory settings: named, with what to do.
      const sun = await out(ids.sun);
      expect(sun?.addons).toEqual(['sun_position']);
      expect(required(sun)[0]?.message).toMatch(/sun_position.*addonsToUse/);
    },
    180_000,
  );

  it('renders without an add-on that fails to load, and says so in finalConfig', async () => {
    const { client } = e2e;
    const job = await validationOutcome(client, await submit(client, brokenZip));
    expect(job.status).toBe('validated');
    expect(await minAlpha(await renderFirstFrame(job.id))).toBe(255);
    const final = (await client.getJob(job.id)).finalConfig;
    const warning = final?.analysisWarnings?.find((w) => w.code === 'RENDER_SETUP_WARNING');
    expect(warning?.message).toMatch(/rb_film_probe.*probe add-on is broken/);
    expect(warning?.blocking).toBe(false);
    expect(final?.notes).toContain('rb_film_probe');
  }, 120_000);
});
