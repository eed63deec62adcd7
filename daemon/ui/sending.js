// The job window's "Sending" list (app.js): the packs and submissions packing or uploading now, each
// with its progress line from transfer.js, dropped once it is sent. On `window.rbSending`.
// Text goes through textContent only, never innerHTML.
'use strict';

(function () {
  /** Packs and submissions packing or uploading now, by `pack:<id>` / `submission:<id>`: {name, line}. */
  const transfers = new Map();
  const MOVING_STEPS = new Set(['packing', 'uploading']);
  /** What app.js gives: make(tag, className) and $(id). */
  let deps;

  function renderTransfers() {
    const list = deps.$('transfers');
    list.replaceChildren(
      ...[...transfers.entries()].map(([key, t]) => {
        const li = deps.make('li');
        const [kind, id] = key.split(/:(.*)/s);
        li.dataset[kind === 'pack' ? 'packId' : 'submissionId'] = id;
        const name = deps.make('span', 'transfer-name');
        name.textContent = t.name;
        const line = deps.make('span', 'transfer-line');
        line.textContent = t.line;
        li.append(name, line);
        return li;
      }),
    );
    deps.$('sending').hidden = transfers.size === 0;
  }

  function baseName(p) {
    return (
      String(p || '')
        .split(/[\\/]/)
        .filter(Boolean)
        .pop() || ''
    );
  }

  /** Keeps a pack or submission while it packs or uploads, drops it after. */
  function onTransfer(name, data) {
    if (name === 'pack') {
      if (data.state === 'packing')
        transfers.set(`pack:${data.packId}`, { name: 'Project', line: window.rbTransfer.packLine(data) });
      else transfers.delete(`pack:${data.packId}`);
    } else if (MOVING_STEPS.has(data.step)) {
      const line = window.rbTransfer.submissionLine(data) || (data.step === 'packing' ? 'Packing…' : 'Uploading…');
      transfers.set(`submission:${data.id}`, { name: baseName(data.path), line });
    } else transfers.delete(`submission:${data.id}`);
    renderTransfers();
  }

  /** Forgets the submissions, before the daemon's list of them is read again. */
  function clearSubmissions() {
    for (const key of [...transfers.keys()]) if (key.startsWith('submission:')) transfers.delete(key);
  }

  window.rbSending = {
    init(d) {
      deps = d;
    },
    onTransfer,
    clearSubmissions,
    render: renderTransfers,
  };
})();
