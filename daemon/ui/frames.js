// The job window's frames (on `window.rbFrames`): a job's frame thumbnails in a row under its row,
// the latest finished frame above them and a flip-book of them (flipbook.js). The images are fetched
// through the daemon, which holds the API key, and shown as blob: URLs; they are read again as frames
// finish, at most once a second. Text goes through textContent only.
'use strict';

(function () {
  /** Jobs whose frames are shown, by id: their row of thumbnails (images fetched through the daemon). */
  const framesOpen = new Map();
  /** {api, make, detailRow, token, showMessage, rerender} from app.js. */
  let ctx = null;

  /** An image of the daemon's (which fetches it from the service with its API key) as a blob: URL. */
  async function imageUrl(path) {
    const res = await fetch(path, { headers: { authorization: `Bearer ${ctx.token}` }, cache: 'no-store' });
    if (!res.ok) throw new Error(`${path} answered ${res.status}`);
    return URL.createObjectURL(await res.blob());
  }

  function toggle(id, button) {
    const open = framesOpen.get(id);
    if (open) {
      framesOpen.delete(id);
      open.flip.stop();
      for (const url of open.urls) URL.revokeObjectURL(url);
    } else {
      const { tr, td } = ctx.detailRow('frames-row', id);
      const head = ctx.make('div', 'latest-line');
      const latest = ctx.make('img', 'latest');
      latest.alt = 'Latest finished frame';
      latest.hidden = true;
      const caption = ctx.make('span', 'latest-caption');
      head.append(latest, caption);
      const strip = ctx.make('ol', 'thumbs');
      strip.dataset.count = '0';
      const empty = ctx.make('p', 'frames-empty');
      empty.textContent = 'No frame has a thumbnail yet.';
      const flip = window.rbFlipbook.create(ctx.make);
      td.append(head, strip, empty, flip.el);
      framesOpen.set(id, {
        tr,
        flip,
        frameUrls: new Map(),
        strip,
        latest,
        caption,
        empty,
        items: new Map(),
        urls: [],
        latestFrame: null,
        loading: false,
        lastRead: 0,
      });
      void refreshFrames(id, true);
    }
    button.textContent = framesOpen.has(id) ? 'Hide frames' : 'Frames';
    button.setAttribute('aria-expanded', String(framesOpen.has(id)));
    ctx.rerender();
  }

  /** Reads the job's thumbnails again (at most once a second unless forced) and adds the new ones. */
  async function refreshFrames(id, force = false) {
    const f = framesOpen.get(id);
    if (!f || f.loading || (!force && Date.now() - f.lastRead < 1000)) return;
    f.loading = true;
    f.lastRead = Date.now();
    try {
      const list = await ctx.api('GET', `/jobs/${encodeURIComponent(id)}/thumbnails`);
      for (const t of list.thumbnails) {
        if (f.items.has(t.frame)) continue;
        const li = ctx.make('li');
        li.dataset.frame = String(t.frame);
        const img = ctx.make('img');
        img.alt = `Frame ${t.frame}`;
        const label = ctx.make('span');
        label.textContent = String(t.frame);
        li.append(img, label);
        f.items.set(t.frame, li);
        const url = await imageUrl(t.url);
        f.urls.push(url);
        f.frameUrls.set(t.frame, url);
        img.src = url;
      }
      f.flip.setFrames([...f.frameUrls].map(([frame, url]) => ({ frame, url })));
      f.flip.setFps(list.fps);
      f.strip.replaceChildren(...[...f.items.keys()].sort((a, b) => a - b).map((k) => f.items.get(k)));
      f.strip.dataset.count = String(f.items.size);
      f.empty.hidden = f.items.size > 0;
      if (list.latest && list.latest.frame !== f.latestFrame) {
        f.latestFrame = list.latest.frame;
        const url = await imageUrl(list.latest.url);
        f.urls.push(url);
        f.latest.src = url;
        f.latest.hidden = false;
        f.caption.textContent = `Latest finished frame: ${list.latest.frame}`;
      }
    } catch (err) {
      ctx.showMessage(`Frames of job ${id.slice(0, 8)}: ${err.message}`);
    } finally {
      f.loading = false;
    }
  }

  /** The frames row of a job, when its frames are shown. */
  function rowsFor(id) {
    return framesOpen.has(id) ? [framesOpen.get(id).tr] : [];
  }

  window.rbFrames = {
    init: (c) => (ctx = c),
    toggle,
    rowsFor,
    refresh: (id, force) => void refreshFrames(id, force),
  };
})();
