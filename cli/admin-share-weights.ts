// `renderbridge admin share-weight <group> <weight>` and `admin share-weights`: the operator's
// fair-share weights, kept with the task queue (its database, or Redis with --redis-url), so every
// service instance and the running service use them for the tasks enqueued next, without a restart.
import { InvalidArgumentError, Option, type Command } from 'commander';
import type { ShareWeights } from '../service/ports/share-weights.js';
import type { ServiceConfig } from '../service/config.js';
import { openQueue } from '../service/stack.js';
import { addStateOptions, openAdminState, type AdminStateOptions } from './admin-state.js';

interface QueueOptions extends AdminStateOptions {
  /** `--redis-url` / RENDERBRIDGE_REDIS_URL: the BullMQ queue's Redis. Default none: the database's queue. */
  redisUrl?: string;
  /** `--queue-prefix` / RENDERBRIDGE_QUEUE_PREFIX. Default 'renderbridge'. */
  queuePrefix?: string;
}

/** Runs `fn` on the weights of the queue the service uses: BullMQ with a Redis URL, else the database's. */
async function withWeights<T>(o: QueueOptions, fn: (w: ShareWeights) => Promise<T>): Promise<T> {
  const state = await openAdminState(o);
  try {
    const queue = await openQueue({ redisUrl: o.redisUrl, queuePrefix: o.queuePrefix } as ServiceConfig, state.queue);
    try {
      return await fn(queue);
    } finally {
      if (queue !== state.queue) await queue.close();
    }
  } finally {
    await state.close();
  }
}

function queueOptions(cmd: Command): Command {
  return addStateOptions(cmd)
    .addOption(new Option('--redis-url <url>', 'Redis URL of the BullMQ task queue').env('RENDERBRIDGE_REDIS_URL'))
    .addOption(
      new Option('--queue-prefix <name>', 'key prefix of the BullMQ queues')
        .env('RENDERBRIDGE_QUEUE_PREFIX')
        .default('renderbridge'),
    );
}

function parseWeight(v: string): number {
  const n = Number(v);
  if (!(n > 0) || !Number.isFinite(n)) throw new InvalidArgumentError('a weight is a positive number, e.g. 2 or 0.5');
  return n;
}

export function registerShareWeightCommands(admin: Command): void {
  queueOptions(
    admin
      .command('share-weight')
      .description(
        'Set the fair-share weight of a workspace (its id) or of one submitter in it (<workspaceId>/<userId>): ' +
          'while several wait, slot time is shared in proportion (default weight 1)',
      )
      .argument('<group>', 'workspace id, or <workspaceId>/<userId>')
      .argument('<weight>', 'a positive number, e.g. 2', parseWeight),
  ).action(async (group: string, weight: number, o: QueueOptions) => {
    await withWeights(o, (w) => w.setShareWeight(group, weight));
    console.log(`Share weight of ${group}: ${weight} (for the tasks enqueued from now on).`);
  });

  queueOptions(
    admin.command('share-weights').description('List the fair-share weights set').option('--json', 'print JSON'),
  ).action(async (o: QueueOptions & { json?: boolean }) => {
    const weights = await withWeights(o, (w) => w.shareWeights());
    if (o.json) {
      process.stdout.write(`${JSON.stringify(weights, null, 2)}\n`);
      return;
    }
    const entries = Object.entries(weights);
    if (entries.length === 0) console.log('No weights set: every workspace weighs 1.');
    for (const [group, weight] of entries) console.log(`${group}  ${weight}`);
  });
}
