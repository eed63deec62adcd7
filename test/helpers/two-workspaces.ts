// The setup of the API tests that check what one workspace sees of another's jobs: one service in the
// test's process, a client for its own key and a client for a key of a second workspace. Started before
// the file's tests and closed after them.
import { afterAll, beforeAll } from 'vitest';
import type { Call } from './flow.js';
import { api } from './http.js';
import { startTestService, type TestService } from './service.js';

export interface TwoWorkspaces {
  /** The service; read it inside tests and hooks, once the file's beforeAll has started it. */
  readonly svc: TestService;
  /** Requests with the service's own test key. */
  call: Call;
  /** Requests with a key of another workspace. */
  other: Call;
}

/**
 * Registers the file's beforeAll and afterAll. `otherLabel` names the second workspace's key (default
 * 'other-studio'). The clients can be taken apart at once; they call the service once it is up.
 */
export function useTwoWorkspaces(otherLabel = 'other-studio'): TwoWorkspaces {
  let svc: TestService | undefined;
  let own: Call | undefined;
  let theirs: Call | undefined;
  beforeAll(async () => {
    svc = await startTestService();
    own = api(svc.baseUrl, svc.apiKey);
    theirs = api(svc.baseUrl, await svc.createApiKey(otherLabel));
  });
  afterAll(() => svc?.close());
  const started = <T>(x: T | undefined): T => {
    if (x === undefined) throw new Error('useTwoWorkspaces: the service starts in beforeAll; call it from a test');
    return x;
  };
  return {
    get svc() {
      return started(svc);
    },
    call: ((...args: Parameters<Call>) => started(own)(...args)) as Call,
    other: ((...args: Parameters<Call>) => started(theirs)(...args)) as Call,
  };
}
