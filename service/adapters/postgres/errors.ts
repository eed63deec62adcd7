// What a failed PostgreSQL connection means, said without the password.

/** The URL with its password replaced by ***, for messages and logs; a placeholder when it does not parse. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparseable database URL)';
  }
}

/** The password of a URL, to scrub from error texts that might echo it. */
function passwordOf(url: string): string {
  try {
    return decodeURIComponent(new URL(url).password);
  } catch {
    return '';
  }
}

/** `text` with the URL's password cut out (short passwords are left: scrubbing them would garble the text). */
export function scrub(text: string, url: string): string {
  const password = passwordOf(url);
  return password.length >= 4 ? text.split(password).join('***') : text;
}

/** Throws a readable error unless `url` is a postgres:// or postgresql:// URL; never echoes it. */
export function checkUrl(url: string): void {
  let protocol: string;
  try {
    protocol = new URL(url).protocol;
  } catch {
    throw new Error('the database URL does not parse; expected postgres://user:password@host:5432/database');
  }
  if (protocol !== 'postgres:' && protocol !== 'postgresql:') {
    throw new Error(`the database URL must start with postgres:// or postgresql:// (got ${protocol}//)`);
  }
}

/** What to check next, by PostgreSQL error code (SQLSTATE) or Node socket error code. */
function hint(code: string | undefined): string {
  switch (code) {
    case 'ECONNREFUSED':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
      return 'check that the PostgreSQL server is running and that the host and port in the database URL are right';
    case '28P01':
    case '28000':
      return 'check the user name and password in the database URL';
    case '3D000':
      return 'create the database (createdb <name>) or fix its name in the database URL';
    case '57P03':
      return 'the server is starting up or shutting down; try again shortly';
    default:
      return 'check the database URL and that the PostgreSQL server is running and accepts connections';
  }
}

/** An Error saying that connecting to `url` failed, why, and what to check, without the password. */
export function connectError(err: unknown, url: string): Error {
  const e = err as { code?: string; message?: string; errors?: { code?: string }[] } | undefined;
  // A host with several addresses fails with an AggregateError that has no message of its own.
  const code = e?.code ?? e?.errors?.[0]?.code;
  const reason = scrub(e?.message || code || String(err), url);
  return new Error(`cannot connect to PostgreSQL at ${redactUrl(url)}: ${reason}; ${hint(code)}`);
}
