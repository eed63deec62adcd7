// `renderbridge doctor`: checks what a farm machine needs and prints what to fix. Run it on the
// service machine with the service's engine options, and on each worker with --service-url.
// Exit 0 when nothing failed (warnings allowed), else 1; --json prints the findings for scripts.
import type { Command } from 'commander';
import { addEngineOptions, engineConfig, type EngineOptions } from '../engines.js';
import { EXIT } from '../exit-codes.js';
import { collect, DATA_DIR_DEFAULT, resolveDataDir } from '../options.js';
import { printJson } from '../output.js';
import { parseByteSize } from '../unpack-options.js';
import type { CheckResult } from './check.js';
import { clockCheck, databaseCheck, redisCheck, s3Check } from './farm-checks.js';
import { memoryCheck, tagsCheck } from './pool-checks.js';
import {
  blenderChecks,
  diskCheck,
  eeveeCheck,
  ffmpegCheck,
  gpuCheck,
  nodeCheck,
  sandboxCheck,
} from './machine-checks.js';

interface DoctorOptions extends EngineOptions {
  dataDir?: string;
  blender: string[];
  serviceUrl?: string;
  minFreeDisk?: number;
  eevee: boolean;
  /** The workers' --slot-memory, checked against the machine and its cgroups. Default none: the machine's. */
  slotMemory?: number;
  /** The workers' --tag values, checked as the worker checks them. Default none. */
  tag?: string[];
  /** False: the machine's workers run with --no-sandbox (reported, not tested). Default true. */
  sandbox?: boolean;
  json?: boolean;
}

const MARK: Record<CheckResult['status'], string> = { ok: 'ok  ', warn: 'WARN', fail: 'FAIL', skip: 'skip' };

export async function runDoctor(
  o: DoctorOptions,
  onResult: (r: CheckResult) => void = () => undefined,
): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  const add = (r: CheckResult | CheckResult[]) => {
    for (const x of Array.isArray(r) ? r : [r]) {
      results.push(x);
      onResult(x);
    }
  };
  const engines = engineConfig(o);
  const dataDir = resolveDataDir(o.dataDir).dir;
  add(nodeCheck());
  const blender = await blenderChecks(o.blender);
  add(blender.results);
  const main = blender.builds.find((b) => b.isDefault);
  add(await sandboxCheck(main, o.sandbox !== false));
  add(o.eevee ? await eeveeCheck(main) : { name: 'eevee', status: 'skip', detail: '--no-eevee' });
  add(await ffmpegCheck());
  add(await gpuCheck(blender.builds));
  add(memoryCheck(o.slotMemory));
  add(tagsCheck(o.tag ?? []));
  add(await diskCheck(dataDir, o.minFreeDisk ?? 1024 ** 3));
  add(await databaseCheck({ dataDir, ...(engines.databaseUrl ? { databaseUrl: engines.databaseUrl } : {}) }));
  add(await redisCheck(engines.redisUrl));
  add(await s3Check(engines.s3));
  add(await clockCheck(o.serviceUrl));
  return results;
}

export function registerDoctorCommand(program: Command): void {
  const cmd = program
    .command('doctor')
    .description(
      'Check what a farm machine needs (Blender and its devices, EEVEE, ffmpeg, GPUs, disk, database, Redis, ' +
        'S3, clock) and print what to fix',
    )
    .option('--data-dir <dir>', `the service's or worker's data folder (default: ${DATA_DIR_DEFAULT})`)
    .option(
      '--blender <path>',
      'a Blender build to check (repeatable); RENDERBRIDGE_BLENDER_X_Y and PATH are searched too',
      collect,
      [],
    )
    .option('--service-url <url>', "a service to compare this machine's clock with (run on workers)")
    .option(
      '--min-free-disk <size>',
      'free space tasks need in the data folder (bytes, or e.g. 5GiB; default 1GiB)',
      parseByteSize,
    )
    .option('--slot-memory <size>', "the workers' memory per CPU slot, to check (e.g. 16GiB)", parseByteSize)
    .option('--tag <tag>', 'a worker tag, to check (repeatable)', collect, [])
    .option('--no-eevee', 'skip the EEVEE test render (about 10 s)')
    .option('--no-sandbox', "this machine's workers run with --no-sandbox: say so instead of testing the sandbox")
    .option('--json', 'print the findings as JSON');
  addEngineOptions(cmd).action(async (o: DoctorOptions) => {
    const print = (r: CheckResult) => {
      if (o.json) return;
      console.log(`${MARK[r.status]}  ${r.name.padEnd(9)} ${r.detail}`);
      if (r.fix) console.log(`${' '.repeat(16)}-> ${r.fix}`);
    };
    const results = await runDoctor(o, print);
    const failed = results.filter((r) => r.status === 'fail').length;
    const warned = results.filter((r) => r.status === 'warn').length;
    if (o.json) printJson({ ok: failed === 0, checks: results });
    else
      console.log(
        failed === 0
          ? `\nReady${warned ? `, with ${warned} warning(s)` : ''}.`
          : `\n${failed} check(s) failed: fix them as shown above.`,
      );
    process.exitCode = failed === 0 ? EXIT.OK : EXIT.FAILURE;
  });
}
