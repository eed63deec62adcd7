// One finding of `renderbridge doctor`: what was checked, how it went, and what to do about it.
export type CheckStatus = 'ok' | 'warn' | 'fail' | 'skip';

export interface CheckResult {
  /** Short name, e.g. `blender`, `database`. */
  name: string;
  status: CheckStatus;
  /** What was found, in one line. */
  detail: string;
  /** What to do, for warn and fail. */
  fix?: string;
}

export const ok = (name: string, detail: string): CheckResult => ({ name, status: 'ok', detail });
export const warn = (name: string, detail: string, fix: string): CheckResult => ({ name, status: 'warn', detail, fix });
export const fail = (name: string, detail: string, fix: string): CheckResult => ({ name, status: 'fail', detail, fix });
export const skip = (name: string, detail: string): CheckResult => ({ name, status: 'skip', detail });

/** The first line of an error's message, without a URL's password. */
export function reason(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return (text.split('\n')[0] ?? '').replace(/\/\/([^:@/]+):[^@/]+@/g, '//$1:***@');
}
