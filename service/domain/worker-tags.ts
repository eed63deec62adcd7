// Worker tags (pools): what a worker says it is (`gpu:a4000`, `mem:64g`, `site:paris`) and what a
// render request requires (`requiredTags`, extension scheduling). A job's frames go only to a worker
// that has every tag it requires. Pure rules, shared by the worker's placement and the service's
// "no live worker can take it" notice.
import { WORKER_TAG_PATTERN as TAG_PATTERN } from '../../shared/api/scheduling.js';
import type { JobRecord } from '../ports/jobs.js';

/** Tags from flags, a config list or `RENDERBRIDGE_WORKER_TAGS` (comma-separated); throws naming a bad one. */
export function parseTags(values: readonly string[]): string[] {
  const tags = values
    .flatMap((v) => v.split(','))
    .map((t) => t.trim())
    .filter(Boolean);
  const bad = tags.find((t) => !TAG_PATTERN.test(t));
  if (bad !== undefined) {
    throw new Error(
      `worker tag "${bad}" is not valid: use letters, digits and . _ : / - (e.g. gpu:a4000, site:paris), ` +
        'at most 64 characters',
    );
  }
  return [...new Set(tags)];
}

/** The tags a job's render request requires (none when it names none). */
export function requiredTagsOf(job: Pick<JobRecord, 'job'> | undefined): string[] {
  const scheduling = (job?.job as { scheduling?: { requiredTags?: unknown } } | undefined)?.scheduling;
  const tags = scheduling?.requiredTags;
  return Array.isArray(tags) ? tags.filter((t): t is string => typeof t === 'string') : [];
}

/** The required tags a worker lacks. */
export function missingTags(required: readonly string[], has: readonly string[]): string[] {
  return required.filter((t) => !has.includes(t));
}
