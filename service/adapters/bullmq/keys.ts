// Where the BullMQ task queue keeps things in Redis. BullMQ owns `<prefix>:<kind>:*` (one queue
// per task kind); what BullMQ does not model (attempts as the port counts them, joins, the job
// index, leases, blocklist counters) lives under `<prefix>:tq:*`. `tq` is no task kind, so the
// two never collide.

export interface KeySpace {
  /** BullMQ's `prefix` option: its keys are `<bullPrefix>:<queue>:...`. */
  bullPrefix: string;
  /** Start of every BullMQ key, with the separator: `<prefix>:`. */
  bull: string;
  /** Start of this adapter's own keys: `<prefix>:tq:`. */
  own: string;
}

export function keySpace(prefix: string): KeySpace {
  if (!prefix || /\s/.test(prefix))
    throw new Error(`the Redis key prefix must be a non-empty word without spaces (got ${JSON.stringify(prefix)})`);
  return { bullPrefix: prefix, bull: `${prefix}:`, own: `${prefix}:tq:` };
}

/**
 * The BullMQ job id of a task. BullMQ refuses custom ids that contain ':' or look like integers,
 * and the service's ids do (`chunk:<job>:<n>`), so such ids are percent-encoded; the result is
 * one-to-one (a plain id never contains '%') and readable. The task's own id is stored with it.
 */
export function bullJobId(taskId: string): string {
  if (!taskId) throw new Error('a task id must not be empty');
  const encoded = taskId.replace(/%/g, '%25').replace(/:/g, '%3A');
  return /^-?\d+$/.test(encoded) || `${parseInt(encoded, 10)}` === encoded ? `%i${encoded}` : encoded;
}
