// GET /farm/share (extension scheduling) names the caller's own submitters by their API keys'
// labels, never by those of another workspace: a user with two keys shows both labels, a user whose
// only key is revoked still shows its label, a group whose user has no key shows only its user id.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createApiKey } from '../../../service/domain/api-keys.js';
import { FarmShare } from '../../../shared/api/farm-share.js';
import { queueChunks } from '../../helpers/farm-share.js';
import { createJob } from '../../helpers/flow.js';
import { api } from '../../helpers/http.js';
import { useTwoWorkspaces } from '../../helpers/two-workspaces.js';

const ws = useTwoWorkspaces('labels-other-studio');

describe('the farm share names submitters by their keys', () => {
  it("shows the own workspace's key labels, the user id without a key, and no other workspace's", async () => {
    const keys = ws.svc.service.ports.keys;
    const key = async (workspace: string, user: string, label: string) =>
      createApiKey(keys, { workspace, user, label });
    const laptop = await key('studio', 'alice', 'alice-laptop');
    await key('studio', 'alice', 'alice-tray');
    const bob = await key('studio', 'bob', 'bob-old-key');
    expect(await keys.revokeKey(bob.record.id)).toBe(true);
    const secret = await key('labels-other-studio', 'alice', 'their-secret-label');

    const alice = await createJob(api(ws.svc.baseUrl, laptop.key));
    await queueChunks(ws.svc, alice, 2, 50);
    // Bob's key is revoked: his job, made before, still waits.
    const bobs = { ...(await createJob(ws.call)), userId: bob.record.userId };
    await queueChunks(ws.svc, bobs, 1, 50);
    const ghost = { ...(await createJob(ws.call)), userId: randomUUID() };
    await queueChunks(ws.svc, ghost, 1, 50);
    const theirs = await createJob(api(ws.svc.baseUrl, secret.key));
    await queueChunks(ws.svc, theirs, 1, 50);

    const r = await ws.call('GET', '/farm/share');
    expect(r.status).toBe(200);
    const [own, another] = FarmShare.parse(r.body).data.workspaces;
    expect(own).toMatchObject({ own: true, userId: null, label: null });
    const byUser = new Map(own!.submitters.map((s) => [s.userId, s.label]));
    expect(byUser).toEqual(
      new Map<string | null, string | null>([
        [alice.userId, 'alice-laptop, alice-tray'],
        [bob.record.userId, 'bob-old-key'],
        [ghost.userId, null],
      ]),
    );
    expect(another).toMatchObject({ own: false, userId: null, label: null, submitters: [] });
    expect(JSON.stringify(r.body)).not.toContain('their-secret-label');

    // Seen from the other workspace: its own submitter by its label, this one's never.
    const seen = FarmShare.parse((await api(ws.svc.baseUrl, secret.key)('GET', '/farm/share')).body).data;
    expect(seen.workspaces[0]?.submitters.map((s) => s.label)).toEqual(['their-secret-label']);
    expect(JSON.stringify(seen)).not.toMatch(/alice-laptop|bob-old-key/);
  });
});
