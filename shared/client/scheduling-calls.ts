// The typed calls of the scheduling extension (see `hasExtension('scheduling')`): a job's
// priority, pause and resume, "go" after its preview frames, the queue ahead of it and the farm's
// share. The render request's own `scheduling` goes through `renderJob`. RenderJobClient (client.ts) inherits them.
import type { FarmShare, QueueAhead } from '../api/farm-share.js';
import type { Job } from '../api/job.js';
import { ExtensionCalls } from './extension-calls.js';
import type { CallOptions } from './route-calls.js';

export class SchedulingCalls extends ExtensionCalls {
  /** `POST /jobs/{id}/priority`: the unfinished job's new priority, 0-100 (higher claimed first). */
  async setJobPriority(id: string, priority: number, options?: CallOptions): Promise<Job> {
    return (await this.call('setJobPriority', { id, body: { priority }, ...options })).data;
  }

  /** `POST /jobs/{id}/pause`: no new frame of the job is claimed until resume; running frames finish. */
  async pauseJob(id: string, options?: CallOptions): Promise<Job> {
    return (await this.call('pauseJob', { id, ...options })).data;
  }

  /** `POST /jobs/{id}/resume`: the paused job's frames are claimed again. */
  async resumeJob(id: string, options?: CallOptions): Promise<Job> {
    return (await this.call('resumeJob', { id, ...options })).data;
  }

  /** `POST /jobs/{id}/approve-previews`: "go" for the frames after the previews of a gated render. */
  async approvePreviews(id: string, options?: CallOptions): Promise<Job> {
    return (await this.call('approvePreviews', { id, ...options })).data;
  }

  /** `GET /jobs/{id}/queue-ahead`: frames and jobs claimed before the job's next frame, and the expected wait. */
  async getJobQueueAhead(id: string, options?: CallOptions): Promise<QueueAhead> {
    return (await this.call('getJobQueueAhead', { id, ...options })).data;
  }

  /** `GET /farm/share`: each workspace's weight, share of the busy render slots and frames waiting. */
  async getFarmShare(options?: CallOptions): Promise<FarmShare['data']> {
    return (await this.call('getFarmShare', { ...options })).data;
  }
}
