// `renderbridge workers`: the farm's workers (extension workers): each worker process with its
// state and last heartbeat, each render slot with what it runs, GPUs, Blender builds and the jobs
// whose blocklist keeps it off, then the queue's open tasks by kind.
import type { Command } from 'commander';
import type { WorkerInfo, WorkerList } from '../shared/api/workers.js';
import { CliError } from './errors.js';
import { EXIT } from './exit-codes.js';
import { cliConfig, clientProvider, withConnectionOptions, type ConnectionOptions } from './connection.js';
import { createOutput } from './output.js';

const BUILD_KIND_WORDS: Record<string, string> = { release: 'release folder', root: 'system root, in bubblewrap' };
const KIND_WORDS: Record<string, string> = {
  validate: 'validation',
  render: 'render planning',
  'render-chunk': 'render frames',
  finalize: 'finalize',
};

function frames(list: number[] | null): string {
  if (!list || list.length === 0) return '';
  const first = list[0]!;
  const last = list[list.length - 1]!;
  return list.length === last - first + 1
    ? ` frames ${first === last ? first : `${first}-${last}`}`
    : ` frames ${list.join(',')}`;
}

/** `15.6 GiB`: slot and machine memory, as people size them. */
const gib = (bytes: number) => `${(bytes / 2 ** 30).toFixed(1)} GiB`;

/** ` (path, kind)` of a build: the path only in the operator's view, the kind when not a plain executable. */
function buildNote(b: WorkerInfo['builds'][number]): string {
  const words = [
    ...(b.path ? [b.path] : []),
    ...(b.kind && b.kind !== 'executable' ? [BUILD_KIND_WORDS[b.kind] ?? b.kind] : []),
  ];
  return words.length ? ` (${words.join(', ')})` : '';
}

/** The lines of one worker, as a person reads them. */
export function workerLines(w: WorkerInfo): string[] {
  const lines = [
    `${w.name}  ${w.state}  (${w.hostname ? `${w.hostname}, ` : ''}renderbridge ${w.version}, last ` +
      `heartbeat ${w.secondsSinceHeartbeat.toFixed(0)} s ago, id ${w.id})`,
  ];
  for (const s of w.slots) {
    const tasks = s.tasks.map(
      (t) =>
        `${KIND_WORDS[t.kind] ?? t.kind} of ` +
        (t.jobId ? `job ${t.jobId}${t.jobName ? ` (${t.jobName})` : ''}` : 'a job of another workspace') +
        frames(t.frames),
    );
    const memory = s.memoryBytes !== undefined ? ` ${gib(s.memoryBytes)}` : '';
    lines.push(
      (
        `  ${s.id.padEnd(12)} ${(s.device.name + memory).padEnd(24)} ${s.state.padEnd(8)} ` + tasks.join('; then ')
      ).trimEnd(),
    );
  }
  if (w.tags?.length) lines.push(`  Tags: ${w.tags.join(', ')}`);
  if (w.memoryBytes !== undefined) lines.push(`  Memory: ${gib(w.memoryBytes)}`);
  if (w.sandbox === false)
    lines.push("  Sandbox: OFF (--no-sandbox): Blender runs with this worker's network and files");
  if (w.gpus.length) lines.push(`  GPUs: ${w.gpus.map((g) => `${g.name} (${g.uuid})`).join(', ')}`);
  lines.push(`  Blender: ${w.builds.map((b) => `${b.version}${buildNote(b)}`).join(', ') || 'none'}`);
  for (const b of w.blocklistedBy)
    lines.push(
      `  kept off job ${b.jobId}${b.jobName ? ` (${b.jobName})` : ''} by its blocklist: ${b.failures} failed ` +
        `tasks on ${b.slots.join(', ')}`,
    );
  return lines;
}

export function registerWorkersCommand(program: Command): void {
  withConnectionOptions(
    program
      .command('workers')
      .description(
        "List the farm's workers: slots and what they run, GPUs, Blender builds, last heartbeat; and the " +
          'queue by task kind',
      ),
  ).action(async (o: ConnectionOptions) => {
    const client = await clientProvider(cliConfig(o)).client();
    if (!(await client.hasExtension('workers'))) {
      throw new CliError(
        'This service does not list its workers (no "workers" extension in GET /extensions): update the ' +
          'service to a renderbridge version that has it.',
        EXIT.FAILURE,
      );
    }
    const data: WorkerList['data'] = await client.listWorkers();
    const out = createOutput(o);
    out.result({ ...data });
    if (data.workers.length === 0)
      out.line(
        'No worker has reported: start one with `renderbridge worker`, or run the service with --workers 1 or more.',
      );
    for (const w of data.workers) for (const l of workerLines(w)) out.line(l);
    const queues = data.queue.map((q) => `${KIND_WORDS[q.kind] ?? q.kind} ${q.queued} queued, ${q.running} running`);
    out.line(`queue: ${queues.join('; ')}`);
  });
}
