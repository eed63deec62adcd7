// Every conformance suite opens a fresh harness per test and closes it whatever the test did.
export function withHarness<H extends { close(): Promise<void> }>(open: () => Promise<H>) {
  return (fn: (h: H) => Promise<void>) => async () => {
    const h = await open();
    try {
      await fn(h);
    } finally {
      await h.close();
    }
  };
}
