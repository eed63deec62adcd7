// The daemon's submissions: each runs runSubmission in the background, its state kept in memory
// and published as `submission` events at every step and upload progress update. The profile's
// defaults are read at each start, so an edit of config.toml applies to the next submission.
import { randomUUID } from 'node:crypto';
import type { Submission } from '../../shared/daemon/submission-schemas.js';
import { DaemonError } from '../errors.js';
import type { EventSink, Submissions } from '../ports.js';
import { withSubmitDefaults, type SubmitDefaults } from './defaults.js';
import { newSubmission, runSubmission, type SubmissionDeps } from './run.js';

export interface SubmissionsDeps extends SubmissionDeps {
  events: EventSink;
  /** The active profile's submission defaults, read at each start. Default none. */
  defaults?: () => SubmitDefaults;
}

interface Entry {
  state: Submission;
  done: Promise<Submission>;
}

export function createSubmissions(deps: SubmissionsDeps): Submissions {
  const entries = new Map<string, Entry>();

  return {
    start(given) {
      const req = deps.defaults ? { ...given, settings: withSubmitDefaults(given.settings, deps.defaults()) } : given;
      const id = randomUUID();
      const holder = { state: newSubmission(req, id) };
      const done = runSubmission(
        req,
        deps,
        (s) => {
          holder.state = s;
          deps.events.publish({ event: 'submission', data: s });
        },
        { id },
      );
      entries.set(id, Object.assign(holder, { done }));
      return { ...holder.state };
    },
    get(id) {
      const entry = entries.get(id);
      return entry ? { ...entry.state } : undefined;
    },
    list() {
      // Newest first, like the service's job list.
      return [...entries.values()].map((e) => ({ ...e.state })).reverse();
    },
    async settled(id) {
      const entry = entries.get(id);
      if (!entry) throw new DaemonError('DAEMON_NOT_FOUND', `No submission ${id}: list them with GET /submissions.`);
      return entry.done;
    },
  };
}
