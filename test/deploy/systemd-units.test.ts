// The systemd units under deploy/ are real files an admin copies to /etc/systemd/system: systemd's
// own checker must accept them (no unknown keys, no missing pieces), their sandbox must rate OK
// in `systemd-analyze security`, and every option they pass must be one the CLI knows.
// systemd-analyze runs against a scratch root holding this machine's system units, the units
// and, at the ExecStart path, a launcher of this checkout's real CLI.
import { execFile } from 'node:child_process';
import { chmod, cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-run.js';

const run = promisify(execFile);
const UNITS = ['renderbridge-service.service', 'renderbridge-worker.service'];
const deploy = path.resolve('deploy/systemd');
let root: string;

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'rb-units-'));
  // verify resolves dependencies (multi-user.target, sysinit.target...) inside --root.
  await cp('/usr/lib/systemd/system', path.join(root, 'usr/lib/systemd/system'), {
    recursive: true,
    verbatimSymlinks: true,
  });
  await mkdir(path.join(root, 'etc/systemd/system'), { recursive: true });
  for (const u of UNITS) await cp(path.join(deploy, u), path.join(root, 'etc/systemd/system', u));
  await mkdir(path.join(root, 'etc/renderbridge'), { recursive: true });
  await cp(path.join(deploy, 'renderbridge.env.example'), path.join(root, 'etc/renderbridge/renderbridge.env'));
  const bin = path.join(root, 'usr/local/bin/renderbridge');
  await mkdir(path.dirname(bin), { recursive: true });
  await writeFile(bin, `#!/bin/sh\nexec ${process.execPath} ${path.resolve('bin/renderbridge.js')} "$@"\n`);
  await chmod(bin, 0o755);
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

function execStart(unit: string): string[] {
  const line = unit.split('\n').find((l) => l.startsWith('ExecStart='));
  if (!line) throw new Error('no ExecStart');
  return line.slice('ExecStart='.length).trim().split(/\s+/);
}

describe.each(UNITS)('%s', (unit) => {
  it('passes systemd-analyze verify without a warning', async () => {
    const { stdout, stderr } = await run('systemd-analyze', ['verify', `--root=${root}`, unit]);
    expect(stderr).toBe('');
    expect(stdout).toBe('');
  });

  it('rates OK (exposure below 2) in systemd-analyze security', async () => {
    const { stdout, stderr } = await run('systemd-analyze', ['security', '--offline=yes', `--root=${root}`, unit]);
    const m = /Overall exposure level for \S+: ([\d.]+) (\w+)/.exec(stdout + stderr);
    expect(m, stdout + stderr).not.toBeNull();
    expect(Number(m![1])).toBeLessThan(2);
    expect(m![2]).toBe('OK');
  });

  it('runs a command and options the CLI knows, as the unprivileged service user', async () => {
    const text = await readFile(path.join(deploy, unit), 'utf8');
    const [bin, command, ...args] = execStart(text);
    expect(bin).toBe('/usr/local/bin/renderbridge');
    expect(text).toMatch(/^User=renderbridge$/m);
    expect(text).toMatch(/^NoNewPrivileges=yes$/m);
    const help = await runCli([command!, '--help'], {});
    expect(help.code).toBe(0);
    for (const flag of args.filter((a) => a.startsWith('--')))
      expect(help.stdout, `${command} ${flag}`).toContain(flag);
  });
});
