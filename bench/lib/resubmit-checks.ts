// The verdicts of `npm run bench:resubmit`: each target against a mode's steps (first submit, one
// texture changed, nothing changed, the link drops), and the re-submit loop of the CLI beside the
// daemon's (the add-on's path).
import type { Project } from './resubmit-project.js';
import type { StepResult } from './resubmit-step.js';
import { fmt, verdict, type Row } from './results.js';
import { isManifest, MB, mb, s1, shortError } from './resubmit-step-rows.js';

export interface ModeResult {
  mode: string;
  extensions: string[];
  steps: StepResult[];
}

/** Appended to a mode's name for its steps made through the daemon (the add-on's path). */
export const DAEMON_SUFFIX = ', daemon';
/** Issue 30: one texture changed, through the daemon, to the first frame. */
export const DAEMON_TARGET_S = 4.0;

interface Check {
  target: string;
  value: string;
  pass: boolean;
}

/** Each target against one mode's steps: first, changed, unchanged, link down, link down + reset. */
function checks(m: ModeResult, project: Project): Check[] {
  const [first, changed, unchanged, ...drops] = m.steps;
  const manifest = changed ? changed.requests.filter(isManifest).reduce((n, q) => n + q.bytesUp, 0) : 0;
  const byteRatio = changed ? changed.wireBytes / (project.textureBytes + manifest) : NaN;
  const timeRatio = changed?.firstFrameS && first?.firstFrameS ? changed.firstFrameS / first.firstFrameS : NaN;
  const out: Check[] = [
    {
      target: 'one texture changed: wire <= 1.1 x (file + manifest)',
      value: changed
        ? `${byteRatio.toFixed(2)} (${mb(changed.wireBytes)} / (${mb(project.textureBytes)} + ${mb(manifest)}))`
        : '-',
      pass: changed?.ok === true && byteRatio <= 1.1,
    },
    {
      target: 'one texture changed: time <= 25% of the first submit',
      value: Number.isNaN(timeRatio)
        ? '-'
        : `${fmt.pct(timeRatio)} (${s1(changed!.firstFrameS)} / ${s1(first!.firstFrameS)} s)`,
      pass: changed?.ok === true && timeRatio <= 0.25,
    },
    {
      target: 'nothing changed: wire < 1 MB',
      value: unchanged ? mb(unchanged.wireBytes) : '-',
      pass: unchanged?.ok === true && unchanged.wireBytes < MB,
    },
  ];
  for (const d of drops) {
    const ratio = d.wireBytes / project.totalBytes;
    out.push({
      target: `${d.step}: completes by itself`,
      value: d.ok
        ? `yes, first frame after ${s1(d.firstFrameS)} s, ${d.retries ?? '?'} retries`
        : `no: ${shortError(d.error)}`,
      pass: d.ok,
    });
    out.push({
      target: `${d.step}: wire <= 1.2 x project`,
      value: `${ratio.toFixed(2)} (${mb(d.wireBytes)})`,
      pass: d.ok && ratio <= 1.2,
    });
  }
  return out;
}

/** One row per target, a value and verdict column per mode. */
export function checkRows(modes: ModeResult[], project: Project): { rows: Row[]; pass: Map<string, boolean> } {
  const per = modes.map((m) => checks(m, project));
  const rows = per[0]!.map((c, i) => {
    const row: Row = { target: c.target };
    modes.forEach((m, j) => {
      const x = per[j]![i];
      row[m.mode] = x?.value ?? '-';
      row[`${m.mode} verdict`] = x ? verdict(x.pass) : '-';
    });
    return row;
  });
  return { rows, pass: new Map(modes.map((m, j) => [m.mode, per[j]!.every((c) => c.pass)])) };
}

/** The re-submit loop of each path side by side; the daemon's changed re-submit against the 4.0 s. */
export function loopRows(modes: ModeResult[]): { rows: Row[]; pass: boolean | null } {
  let pass: boolean | null = null;
  const rows = modes.map((m) => {
    const daemon = m.mode.endsWith(DAEMON_SUFFIX);
    const [first, changed, unchanged] = m.steps;
    const ok = changed?.ok === true && (changed.firstFrameS ?? Infinity) <= DAEMON_TARGET_S;
    if (daemon) pass = (pass ?? true) && ok;
    return {
      path: daemon ? `${m.mode.slice(0, -DAEMON_SUFFIX.length)}: daemon (add-on)` : `${m.mode}: CLI`,
      'first submit s': s1(first?.firstFrameS),
      'one texture changed s': s1(changed?.firstFrameS),
      'nothing changed s': s1(unchanged?.firstFrameS),
      [`one texture changed <= ${DAEMON_TARGET_S.toFixed(1)} s (daemon)`]: daemon ? verdict(ok) : '-',
    };
  });
  return { rows, pass };
}
