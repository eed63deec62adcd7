// What a client command prints for its result: with --json one JSON document on stdout carrying
// the exit code (narrowed by --fields), else the human lines, and nothing at all with --quiet
// (errors still go to stderr). Scripts read one document per run, whatever happened.
import { CliError } from './errors.js';
import { EXIT, type ExitCode } from './exit-codes.js';

export interface OutputOptions {
  json?: boolean;
  quiet?: boolean;
  /** Comma-separated, dotted paths allowed: `--fields id,status,progress.percent`. */
  fields?: string;
}

export interface Output {
  /** A line for people; dropped under --json and --quiet. */
  line(text: string): void;
  /** The result document under --json: `{ ok, exitCode, ...value }`, narrowed by --fields. */
  result(value: Record<string, unknown>, exitCode?: ExitCode): void;
}

export function createOutput(o: OutputOptions): Output {
  const fields = parseFields(o.fields);
  return {
    line: (text) => {
      if (!o.json && !o.quiet) process.stdout.write(`${text}\n`);
    },
    result: (value, exitCode = EXIT.OK) => {
      if (!o.json) return;
      const doc = { ok: exitCode === EXIT.OK, exitCode, ...value };
      printJson(fields ? selectFields(doc, fields) : doc);
    },
  };
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** `--fields a,b.c` as paths; a usage error for an empty list or an empty segment. */
export function parseFields(spec: string | undefined): string[][] | undefined {
  if (spec === undefined) return undefined;
  const paths = spec
    .split(',')
    .map((f) => f.trim())
    .filter((f) => f !== '');
  if (paths.length === 0 || paths.some((p) => p.split('.').some((s) => s === ''))) {
    throw new CliError(
      `--fields takes comma-separated field names, dotted paths allowed (e.g. id,status,progress.percent), ` +
        `got ${JSON.stringify(spec)}`,
      EXIT.USAGE,
    );
  }
  return paths.map((p) => p.split('.'));
}

/**
 * The document with only the given paths, nested as in the original (`progress.percent` gives
 * `{ progress: { percent } }`); a path that does not exist is left out rather than set to null,
 * so a script can tell "absent" from "null". Arrays are mapped element by element.
 */
export function selectFields(value: unknown, paths: string[][]): unknown {
  if (Array.isArray(value)) return value.map((v) => selectFields(v, paths));
  if (value === null || typeof value !== 'object') return value;
  const source = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  const byHead = new Map<string, string[][]>();
  for (const [head, ...rest] of paths) {
    if (head === undefined || !(head in source)) continue;
    const list = byHead.get(head) ?? [];
    list.push(rest);
    byHead.set(head, list);
  }
  for (const [head, rests] of byHead) {
    out[head] = rests.some((r) => r.length === 0) ? source[head] : selectFields(source[head], rests);
  }
  return out;
}
