// What the scripted-CLI tests share: the CLI run with a fresh HOME and XDG folders, against the
// test service (or none), and the one JSON document a `--json` run prints.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { runCli, type CliRun } from '../helpers/cli-run.js';
import { startTestService, type TestService } from '../helpers/service.js';

export interface Doc {
  ok: boolean;
  exitCode: number;
  error?: { name: string; message: string };
  [key: string]: unknown;
}

export function doc(stdout: string): Doc {
  return JSON.parse(stdout) as Doc;
}

/**
 * The calling file's CLI runs: a fresh HOME made before its tests, and with `service` a real service
 * with one worker (closed after the file). Without one, the CLI is pointed at a port nothing listens on.
 */
export class ScriptCli {
  svc!: TestService;
  home!: string;

  constructor(opts: { service: boolean }) {
    beforeAll(async () => {
      if (opts.service) this.svc = await startTestService({ workers: 1 });
      this.home = await mkdtemp(path.join(tmpdir(), 'rb-script-home-'));
    }, 120_000);
    afterAll(async () => {
      await this.svc?.close();
    });
  }

  /** A fresh HOME and XDG folders, the test service and its key; `env` adds to or removes from that. */
  cli(args: string[], env: Record<string, string | undefined> = {}): Promise<CliRun> {
    return runCli(args, this.cliEnv(env));
  }

  cliEnv(env: Record<string, string | undefined> = {}): Record<string, string | undefined> {
    const home = this.home;
    return {
      HOME: home,
      XDG_CONFIG_HOME: path.join(home, 'config'),
      XDG_STATE_HOME: path.join(home, 'state'),
      XDG_DATA_HOME: path.join(home, 'data'),
      RENDERBRIDGE_DOWNLOADS: path.join(home, 'outputs'),
      RENDERBRIDGE_SERVICE_URL: this.svc?.baseUrl ?? 'http://127.0.0.1:9/api/v1',
      RENDERBRIDGE_API_KEY: this.svc?.apiKey ?? 'rb_no_service_here',
      // No session bus: the OS keychain is unreachable, so the key comes from the environment.
      DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent/bus',
      ...env,
    };
  }

  async submitNoWait(args: string[]): Promise<{ code: number | null; jobId: string; stderr: string }> {
    const r = await this.cli(['submit', ...args, '--no-wait', '--no-download', '--json']);
    const d = doc(r.stdout) as Doc & { submission: { jobId: string } };
    return { code: r.code, jobId: d.submission.jobId, stderr: r.stderr };
  }
}
