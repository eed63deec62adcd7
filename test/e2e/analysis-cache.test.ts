// The analysis cache through the service (real Blender, the in-process worker, SQLite): the
// second submit of the same .blend in a workspace is validated without starting Blender, as its
// validation log says, with the same analysis as the first; the same bytes in another workspace
// are analysed by Blender again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RenderJobClient } from '../../shared/client/client.js';
import { buildFixture } from '../helpers/fixtures.js';
import { startE2E, submit, validationOutcome, waitUntil, type E2E } from '../helpers/e2e.js';

let e: E2E;
let scene: string;

beforeAll(async () => {
  e = await startE2E();
  scene = await buildFixture('basic');
}, 120_000);
afterAll(() => e?.svc.close());

/** The validation's log, once its run has ended (GET /jobs/{id}/logs). */
async function validationLog(client: RenderJobClient, id: string): Promise<string> {
  const task = `validate:${id}`;
  await waitUntil('the validation log closed', async () => {
    const index = await client.jobLogIndex(id, { task });
    return index.tasks[0]?.attempts.some((a) => !a.live) ?? false;
  });
  let text = '';
  for await (const part of client.jobLogs(id, { task })) text += part;
  return text;
}

/** Blender's own output in a log: its banner, the file it read, its exit. */
const blenderLines = (log: string) => log.split('\n').filter((l) => /Z (Blender \d|Read blend: |Blender quit)/.test(l));

describe('analysis cache', () => {
  it('validates a re-submit of the same .blend without Blender; another workspace runs Blender', async () => {
    const first = await submit(e.client, scene);
    const one = await validationOutcome(e.client, first);
    expect(one.status).toBe('validated');
    const firstLog = await validationLog(e.client, first);
    expect(blenderLines(firstLog).length).toBeGreaterThan(0);
    expect(firstLog).not.toContain('Analysis reused');

    const second = await submit(e.client, scene);
    const two = await validationOutcome(e.client, second);
    expect(two.status).toBe('validated');
    const secondLog = await validationLog(e.client, second);
    expect(secondLog).toContain('Analysis reused');
    expect(secondLog).toContain('Blender was not started');
    expect(blenderLines(secondLog)).toEqual([]);
    expect(two.analysis?.output).toEqual(one.analysis?.output);
    expect(two.analysis?.id).not.toBe(one.analysis?.id);

    const other = new RenderJobClient({ baseUrl: e.svc.baseUrl, apiKey: await e.svc.createApiKey('other-studio') });
    const theirs = await submit(other, scene);
    expect((await validationOutcome(other, theirs)).status).toBe('validated');
    const theirLog = await validationLog(other, theirs);
    expect(theirLog).not.toContain('Analysis reused');
    expect(blenderLines(theirLog).length).toBeGreaterThan(0);
  }, 180_000);
});
