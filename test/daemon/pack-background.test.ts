// Background packs over real HTTP: a real daemon with the real packer, its event stream read as a
// client reads it. POST /packs answers at once (202, packing); `pack` events carry the phase and
// the bytes; GET /packs/:id reaches ready with the result (or failed with the error body); a ready
// pack expires (its manifest removed) and one a submission consumed is gone.
import { mkdtemp, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBackgroundPacks } from '../../daemon/pack/background.js';
import { createPacker } from '../../daemon/pack/packer.js';
import type { DaemonEvent } from '../../shared/daemon/api.js';
import type { PackState } from '../../shared/daemon/submission-schemas.js';
import { DAEMON_ROUTES } from '../../shared/daemon/api.js';
import { DaemonClient } from '../../shared/daemon/client.js';
import { waitUntil } from '../helpers/e2e.js';
import { daemonCall, openSse, startTestDaemon, type TestDaemon } from './harness.js';
import { put, textBytes } from './pack-helpers.js';

let work: string;
let td: TestDaemon;

// Every pack here is a folder or a path that fails before tracing: the tracer must not run.
const noTrace = () => Promise.reject(new Error('no trace expected'));

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'rb-pack-bg-'));
  // No service: packing never calls it (port 9 answers nothing).
  td = await startTestDaemon(
    { serviceUrl: 'http://127.0.0.1:9/api/external/v1' },
    {
      createPacker: () =>
        createPacker({ workDir: path.join(work, 'packs'), trace: noTrace, createdBy: 'renderbridge-test' }),
    },
  );
}, 60_000);
afterAll(async () => {
  await td?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

/** A project folder of `mib` MiB of text-like data in 4 files (enough for several progress reads). */
function project(name: string, mib: number): string {
  const dir = path.join(work, name);
  put(path.join(dir, 'scene.blend'), Buffer.concat([Buffer.from('BLENDER-v304'), textBytes(200_000)]));
  for (let i = 0; i < 4; i++) put(path.join(dir, 'cache', `part${i}.bin`), textBytes((mib * 1024 * 1024) / 4, i));
  return dir;
}

const packEvents = (events: { event: string; data: unknown }[], id: string) =>
  events
    .filter((e) => e.event === 'pack')
    .map((e) => DAEMON_ROUTES.getPack.response.parse(e.data))
    .filter((s) => s.packId === id);

describe('background packs', () => {
  it(
    'POST /packs answers 202 at once; pack events show hashing progress; GET /packs/:id reaches ready with the ' +
      'result',
    async () => {
      const dir = project('big', 48);
      const sse = await openSse(td.daemon.origin, td.daemon.token);
      const client = new DaemonClient({ origin: td.daemon.origin, token: td.daemon.token });
      const started = await client.startPack({ path: dir });
      expect(started).toMatchObject({ state: 'packing', result: null, error: null });
      const ready = await waitUntil('the pack ready', async () => {
        const s = await client.getPack(started.packId);
        return s.state !== 'packing' && s;
      });
      expect(ready.error).toBeNull();
      expect(ready.state).toBe('ready');
      expect(ready.result).toMatchObject({
        packId: started.packId,
        sceneFile: 'scene.blend',
        fileCount: 5,
        zipPath: null,
      });
      expect(ready.progress.bytesDone).toBe(ready.progress.bytesTotal);
      const total = 48 * 1024 * 1024 + 200_012;
      expect(ready.progress.bytesTotal).toBe(total);

      const events = await sse.waitFor('the ready pack event', (r) => {
        const mine = packEvents(r.events(), started.packId);
        return mine.some((s) => s.state === 'ready') && mine;
      });
      sse.close();
      expect(events[0]).toMatchObject({ state: 'packing', phase: null });
      const hashing = events.filter((s) => s.phase === 'hashing');
      // The phase's first read is published at once: some bytes done, not all.
      expect(hashing.length).toBeGreaterThan(0);
      expect(hashing[0]!.progress.bytesDone).toBeGreaterThan(0);
      expect(hashing[0]!.progress.bytesDone).toBeLessThan(total);
      expect(hashing.every((s) => s.progress.bytesTotal === total)).toBe(true);
      const done = hashing.map((s) => s.progress.bytesDone);
      expect([...done].sort((a, b) => a - b)).toEqual(done);
      expect(events.at(-1)).toMatchObject({ state: 'ready', phase: null, result: { packId: started.packId } });
    },
    60_000,
  );

  it('a failing pack reports its error body in GET /packs/:id and its last event', async () => {
    const missing = path.join(work, 'nope', 'scene.blend');
    const sse = await openSse(td.daemon.origin, td.daemon.token);
    const res = await daemonCall(td.daemon)('POST', '/packs', { path: missing });
    expect(res.status).toBe(202);
    const { packId } = DAEMON_ROUTES.startPack.response.parse(res.json);
    const failed = await waitUntil('the pack failed', async () => {
      const s = DAEMON_ROUTES.getPack.response.parse((await daemonCall(td.daemon)('GET', `/packs/${packId}`)).json);
      return s.state === 'failed' && s;
    });
    expect(failed.result).toBeNull();
    expect(failed.error).toMatchObject({ name: 'PACK_FAILED' });
    expect(failed.error!.message).toContain(missing);
    const last = await sse.waitFor('the failed pack event', (r) =>
      packEvents(r.events(), packId).find((s) => s.state === 'failed'),
    );
    sse.close();
    expect(last.error).toEqual(failed.error);
  });

  it('answers DAEMON_NOT_FOUND for a pack it does not know', async () => {
    const res = await daemonCall(td.daemon)('GET', '/packs/no-such-pack');
    expect(res.status).toBe(404);
    expect(res.json).toMatchObject({ name: 'DAEMON_NOT_FOUND' });
  });
});

describe('createBackgroundPacks', () => {
  it('discards a ready pack nobody submitted once it expires, and forgets one a submission discarded', async () => {
    const packer = createPacker({ workDir: path.join(work, 'expiry'), trace: noTrace, createdBy: 'test' });
    const seen: DaemonEvent[] = [];
    const packs = createBackgroundPacks({ packer, events: { publish: (e) => seen.push(e) }, keepReadyMs: 300 });
    const dir = project('small', 1);
    const ready = async (id: string): Promise<PackState> =>
      waitUntil(`pack ${id} ready`, () => packs.get(id)?.state === 'ready' && packs.get(id));

    const a = packs.start({ path: dir });
    await ready(a.packId);
    const manifest = path.join(work, 'expiry', a.packId, 'renderbridge-manifest.json');
    expect(existsSync(manifest)).toBe(true);
    await waitUntil(
      'the ready pack expired',
      () => packs.get(a.packId) === undefined && !existsSync(manifest) && packer.get(a.packId) === undefined,
    );

    const b = packs.start({ path: dir });
    await ready(b.packId);
    await packer.discard(b.packId); // what a submission does once it uploaded the pack
    expect(packs.get(b.packId)).toBeUndefined();
    expect(seen.every((e) => e.event === 'pack')).toBe(true);
    await packs.close();
  });

  it('close() stops a pack in progress: it ends failed, telling to pack again', async () => {
    const packer = createPacker({ workDir: path.join(work, 'closing'), trace: noTrace, createdBy: 'test' });
    const packs = createBackgroundPacks({ packer, events: { publish: () => undefined } });
    const s = packs.start({ path: project('closing-src', 64) });
    await packs.close();
    const end = packs.get(s.packId);
    expect(end).toMatchObject({ state: 'failed', error: { name: 'PACK_FAILED' } });
  }, 30_000);
});
