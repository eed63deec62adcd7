// GET /jobs/{id}/queue-ahead and GET /farm/share (extension scheduling) through the real service:
// the frames claimed before a job's next frame, and each workspace's weight, share of the busy
// render slots and frames waiting, with another workspace shown but never named. The test plays the
// workers: it enqueues the jobs' render tasks and reports a worker's busy slot to the registry.
import { describe, expect, it } from 'vitest';
import { FarmShare, QueueAheadEnvelope } from '../../../shared/api/farm-share.js';
import { queueChunks, reportBusyWorker } from '../../helpers/farm-share.js';
import { createJob } from '../../helpers/flow.js';
import { errorBody } from '../../helpers/http.js';
import { useTwoWorkspaces } from '../../helpers/two-workspaces.js';

const ws = useTwoWorkspaces();
const { call, other } = ws;

describe('the queue ahead of a job and the farm share', () => {
  it("counts the frames before a job's next one, and shows each workspace's share, others unnamed", async () => {
    const mine = await createJob(call);
    const theirs = await createJob(other);
    await queueChunks(ws.svc, theirs, 2, 60);
    await queueChunks(ws.svc, mine, 3, 50);
    await reportBusyWorker(ws.svc, theirs);

    const ahead = QueueAheadEnvelope.parse((await call('GET', `/jobs/${mine.id}/queue-ahead`)).body).data;
    // Nothing measured yet: the wait cannot be told.
    expect(ahead).toMatchObject({ jobId: mine.id, waiting: true, framesAhead: 2, jobsAhead: 1, liveSlots: 2 });
    expect(ahead.expectedWaitSeconds).toBeNull();
    const first = QueueAheadEnvelope.parse((await other('GET', `/jobs/${theirs.id}/queue-ahead`)).body).data;
    expect(first).toMatchObject({ waiting: true, framesAhead: 0, jobsAhead: 0, expectedWaitSeconds: 0 });
    const notMine = await call('GET', `/jobs/${theirs.id}/queue-ahead`);
    expect(notMine.status).toBe(404);
    expect(errorBody(notMine).name).toBe('JOB_NOT_FOUND');

    const r = await call('GET', '/farm/share');
    expect(r.status).toBe(200);
    const share = FarmShare.parse(r.body).data;
    expect(share).toMatchObject({ liveSlots: 2, busySlots: 1 });
    expect(share.workspaces).toHaveLength(2);
    const [own, another] = share.workspaces;
    expect(own).toMatchObject({ own: true, workspaceId: ws.svc.workspaceId, weight: 1, entitledShare: 0.5 });
    expect(own).toMatchObject({ runningSlots: 0, currentShare: 0, waitingFrames: 3, pausedFrames: 0 });
    expect(own!.submitters).toEqual([expect.objectContaining({ userId: mine.userId, waitingFrames: 3 })]);
    expect(another).toMatchObject({ own: false, workspaceId: null, userId: null, submitters: [] });
    expect(another).toMatchObject({ runningSlots: 1, currentShare: 1, waitingFrames: 2, entitledShare: 0.5 });
    expect(JSON.stringify(r.body)).not.toContain(theirs.workspaceId);
    expect(JSON.stringify(r.body)).not.toContain(theirs.userId);

    // The operator's weight moves the entitled share; paused frames wait apart.
    await ws.svc.service.ports.queue.setShareWeight(theirs.workspaceId, 3);
    expect((await call('POST', `/jobs/${mine.id}/pause`)).status).toBe(200);
    const after = FarmShare.parse((await call('GET', '/farm/share')).body).data;
    expect(after.workspaces[0]).toMatchObject({ own: true, waitingFrames: 0, pausedFrames: 3, entitledShare: 0 });
    expect(after.workspaces[1]).toMatchObject({ weight: 3, entitledShare: 1 });
    const paused = QueueAheadEnvelope.parse((await call('GET', `/jobs/${mine.id}/queue-ahead`)).body).data;
    expect(paused).toMatchObject({ waiting: false, framesAhead: 0, expectedWaitSeconds: null });
  });
});
