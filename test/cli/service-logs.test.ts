// `renderbridge service` logs: human lines on a terminal (a real pseudo-terminal from util-linux
// `script`), JSON lines into a pipe, `--log-format` overriding either; an API key sent in the
// Authorization header appears in neither; one line per request, successful reads (polls) only at
// debug, so a watched job does not flood the terminal.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-run.js';

let dir: string;
let key: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'rb-logs-'));
  const created = await runCli(
    ['admin', 'create-key', '--init', '--data-dir', dir, '--workspace', 'studio', '--label', 'logs'],
    { HOME: dir },
  );
  expect(created.code, created.stderr).toBe(0);
  key = created.stdout.trim().split('\n').at(-1)!;
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const MISSING_JOB = '00000000-0000-4000-8000-00000000abcd';
const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * Runs the service, on a terminal (through `script`) or into a pipe, sends one authorized
 * request once it listens, and returns everything it wrote once that request was logged.
 */
async function serviceOutput(terminal: boolean, extra: string[] = []): Promise<string> {
  const argv = [
    process.execPath,
    '--import',
    'tsx',
    'cli/index.ts',
    'service',
    '--port',
    '0',
    '--workers',
    '0',
    '--data-dir',
    dir,
    ...extra,
  ];
  // In a terminal, script gives the command a pseudo-terminal as stdin, stdout and stderr; its own output is what
  // the terminal showed.
  const child = terminal
    ? spawn('script', ['-qfec', argv.map(quote).join(' '), '/dev/null'], {
        env: { PATH: process.env.PATH, HOME: dir, TERM: 'xterm' },
        stdio: ['pipe', 'pipe', 'pipe'],
      })
    : spawn(argv[0]!, argv.slice(1), { env: { PATH: process.env.PATH, HOME: dir }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  try {
    const baseUrl = await new Promise<string>((resolve, reject) => {
      const look = () => {
        const m = /API base URL: (\S+)/.exec(out + err);
        if (m) resolve(m[1]!);
      };
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        look();
      });
      child.stderr!.on('data', look);
      void exited.then((code) => reject(new Error(`service exited ${code}: ${out}${err}`)));
    });
    const res = await fetch(`${baseUrl}/jobs?pageSize=5`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(200);
    // A read that fails is logged at info (the poll above, at debug, is not): once its line is
    // there, the poll's would be too, since the poll ended first.
    const missing = await fetch(`${baseUrl}/jobs/${MISSING_JOB}`, { headers: { authorization: `Bearer ${key}` } });
    expect(missing.status).toBe(404);
    // The request's line is written after the answer is sent: wait for it.
    await new Promise<void>((resolve, reject) => {
      const check = () => (out.includes(MISSING_JOB) ? resolve() : undefined);
      child.stdout!.on('data', check);
      check();
      void exited.then((code) => reject(new Error(`service exited ${code}: ${out}${err}`)));
    });
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
  return out;
}

function jsonLines(out: string): Record<string, unknown>[] {
  return out
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('renderbridge service logs', () => {
  it('are human lines on a terminal, without the API key', async () => {
    const out = await serviceOutput(true);
    const line = out.split('\n').find((l) => l.includes('request completed'))!;
    expect(line).toBeDefined();
    // pino-pretty: "[HH:MM:ss.l] INFO: request completed", not a JSON object.
    expect(line.trim().startsWith('{')).toBe(false);
    expect(line).toMatch(/\d\d:\d\d:\d\d\.\d{3}/);
    expect(line).toMatch(/INFO/);
    expect(line).toContain(`/api/external/v1/jobs/${MISSING_JOB}`);
    expect(line).toMatch(/statusCode.*404/);
    // One event, one line; the successful poll is not there at info.
    expect(out.split('\n').filter((l) => l.includes('request completed'))).toHaveLength(1);
    expect(out).not.toContain('pageSize=5');
    expect(out).not.toContain(key);
  });

  it('are JSON lines into a pipe, without the API key', async () => {
    const out = await serviceOutput(false);
    const lines = jsonLines(out);
    expect(lines.some((l) => l.msg === 'request completed')).toBe(true);
    const done = lines.filter((l) => l.msg === 'request completed') as {
      req?: { url?: string };
      res?: { statusCode?: number };
      responseTime?: number;
    }[];
    expect(done).toHaveLength(1);
    expect(done[0]!.req?.url).toBe(`/api/external/v1/jobs/${MISSING_JOB}`);
    expect(done[0]!.res?.statusCode).toBe(404);
    expect(done[0]!.responseTime).toBeGreaterThanOrEqual(0);
    expect(lines.some((l) => l.msg === 'incoming request')).toBe(false);
    expect(out).not.toContain(key);
  });

  it('follow --log-format over the terminal check, in both directions', async () => {
    const onTerminal = await serviceOutput(true, ['--log-format', 'json']);
    const logLines = onTerminal.split(/\r?\n/).filter((l) => l.startsWith('{'));
    expect(logLines.map((l) => JSON.parse(l) as { msg?: string }).some((l) => l.msg === 'request completed')).toBe(
      true,
    );
    expect(onTerminal).not.toContain(key);
    const piped = await serviceOutput(false, ['--log-format', 'pretty']);
    expect(
      piped
        .split('\n')
        .find((l) => l.includes('request completed'))
        ?.trim()
        .startsWith('{'),
    ).toBe(false);
    expect(piped).not.toContain(key);
  });
});
