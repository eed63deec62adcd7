// The setup of the API tests that check what one workspace sees of another's jobs: one service in the
// test's process, a client for its own key and a client for a key of a second workspace. Started before
// the file's tests and closed after them.
import { beforeAll } from 'vitest';
import type { Call } from './flow.js';
import { api } from './http.js';
import { useTestService, type UsedService } from './service.js';

/** `svc` and `call` as useTestService gives them. */
export interface TwoWorkspaces extends UsedService {
  /** Requests with a key of another workspace. */
  other: Call;
}

/**
 * Registers the file's beforeAll and afterAll. `otherLabel` names the second workspace's key (default
 * 'other-studio'). The clients can be taken apart at once; they call the service once it is up.
 */
export function useTwoWorkspaces(otherLabel = 'other-studio'): TwoWorkspaces {
  const own = useTestService();
  let theirs: Call | undefined;
  // Runs after useTestService's beforeAll: a file's hooks run one after another, in order.
  beforeAll(async () => {
    theirs = api(own.svc.baseUrl, await own.svc.createApiKey(otherLabel));
  });
  return {
    get svc() {
      return own.svc;
    },
    call: own.call,
    other: ((...args: Parameters<Call>) => {
      if (!theirs) throw new Error('useTwoWorkspaces: the service starts in beforeAll; call it from a test');
      return theirs(...args);
    }) as Call,
  };
}
