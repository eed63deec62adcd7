// bench:render's scenario of a warm Blender killed mid-job: how many frames the worker began twice,
// read from its billing log.
import { readdirSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { timedRender, validatedJob } from './render-jobs.js';
import { verdict } from './results.js';
import { request, s2, withService, type Outcome, type Scene } from './render-scenario-kit.js';

/** A warm Blender killed once mid-job: how many frames were begun twice (from the worker's billing log). */
export async function killMidJob(s: Scene, atFramesDone: number): Promise<Outcome> {
  const logFile = path.join(os.tmpdir(), `rb-bench-kill-${process.pid}.log`);
  const begun = new Map<number, number>();
  const { seconds, killed } = await withService({ slots: 1, logFile }, async (svc) => {
    let killedPid: number | undefined;
    const id = await validatedJob(svc.client, s.file);
    const r = await timedRender(svc.client, id, request(s), s.frames, async (done) => {
      if (killedPid !== undefined || done < atFramesDone) return;
      killedPid = blenderOf(svc.dataDir);
      if (killedPid) process.kill(killedPid, 'SIGKILL');
    });
    for (const line of readFileSync(logFile, 'utf8').split('\n')) {
      if (!line.includes('"render time billed"')) continue;
      const p = JSON.parse(line) as { jobId?: string; frame?: number };
      if (p.jobId === id && p.frame !== undefined) begun.set(p.frame, (begun.get(p.frame) ?? 0) + 1);
    }
    return { seconds: r.seconds, killed: killedPid !== undefined };
  });
  await rm(logFile, { force: true });
  const twice = [...begun.values()].filter((n) => n > 1).length;
  const ok = killed && begun.size === s.frames && twice <= 1;
  return {
    rows: [
      {
        scene: 'subdivision, 1 kill',
        run: 'service (warm), Blender SIGKILLed mid-job',
        'wall s': s2(seconds),
        'frames begun': String(begun.size),
        'frames begun twice': String(twice),
      },
    ],
    verdicts: [
      {
        scene: 'subdivision, 1 kill',
        kills: killed ? '1' : '0 (missed)',
        'frames begun twice': String(twice),
        target: '<= 1 per kill',
        verdict: verdict(ok),
      },
    ],
    pass: ok,
  };
}

/** The pid of a Blender rendering for the service on `dataDir` (its argv names the work folder). */
function blenderOf(dataDir: string): number | undefined {
  for (const pid of readdirPids()) {
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      if (path.basename(argv[0] ?? '').startsWith('blender') && argv.some((a) => a.startsWith(dataDir)))
        return Number(pid);
    } catch {
      // gone meanwhile
    }
  }
  return undefined;
}

function readdirPids(): string[] {
  return readdirSync('/proc').filter((d) => /^\d+$/.test(d));
}
