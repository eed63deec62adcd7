// The daemon's event stream for the job window (app.js), read with fetch since EventSource cannot
// set the Authorization header: each `event:`/`data:` frame is handed on parsed, a frame that is not
// JSON is skipped. On `window.rbEvents`.
'use strict';

(function () {
  /**
   * Reads /events with `token` until the stream ends: onLive() once it answers, then
   * onEvent(name, data) per frame. Rejects when it cannot be opened or breaks.
   */
  async function follow(token, onEvent, onLive) {
    const res = await fetch('/events', {
      headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
      cache: 'no-store',
    });
    if (!res.ok || !res.body) throw new Error(`the event stream answered ${res.status}`);
    onLive();
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, '\n');
      let at;
      while ((at = buffer.indexOf('\n\n')) >= 0) {
        const frame = buffer.slice(0, at);
        buffer = buffer.slice(at + 2);
        let event;
        let data;
        for (const line of frame.split('\n')) {
          if (line.startsWith('event:')) event = line.slice(6).trim();
          else if (line.startsWith('data:'))
            data = (data === undefined ? '' : `${data}\n`) + line.slice(5).replace(/^ /, '');
        }
        if (event && data !== undefined) {
          try {
            onEvent(event, JSON.parse(data));
          } catch {
            // A frame that is not JSON is skipped.
          }
        }
      }
    }
  }

  window.rbEvents = { follow };
})();
