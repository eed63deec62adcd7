// The job window's flip-book (on `window.rbFlipbook`): a job's frame thumbnails played in frame order
// at the shot's fps (the `fps` of GET /jobs/:id/thumbnails; 24 until the render is planned), looping,
// with Play/Pause and the frame shown. It plays the blob: URLs the frames strip already fetched
// through the daemon, so playing costs no request.
'use strict';

(function () {
  const DEFAULT_FPS = 24;

  function create(make) {
    const el = make('div', 'flipbook');
    const img = make('img', 'flip');
    img.alt = 'Flip-book';
    img.hidden = true;
    const play = make('button', 'play');
    play.type = 'button';
    play.textContent = 'Play';
    const caption = make('span', 'flip-caption');
    el.append(play, img, caption);
    let frames = [];
    let fps = DEFAULT_FPS;
    let fpsKnown = false;
    let at = 0;
    let timer = null;

    function show() {
      const f = frames[at];
      if (!f) return;
      if (img.getAttribute('src') !== f.url) img.src = f.url;
      img.hidden = false;
      if (el.dataset.frame !== String(f.frame)) el.dataset.frame = String(f.frame);
      const unknown = fpsKnown ? '' : ' (the shot’s rate is not known yet)';
      caption.textContent = `Frame ${f.frame} (${at + 1}/${frames.length}) · ${fps} fps${unknown}`;
    }

    function stop() {
      if (timer !== null) clearInterval(timer);
      timer = null;
      el.dataset.playing = 'false';
      play.textContent = 'Play';
    }

    function start() {
      if (frames.length === 0) return;
      stop();
      const ms = Math.round(1000 / fps);
      el.dataset.intervalMs = String(ms);
      timer = setInterval(() => {
        at = (at + 1) % frames.length;
        show();
      }, ms);
      el.dataset.playing = 'true';
      play.textContent = 'Pause';
      show();
    }

    play.addEventListener('click', () => (timer === null ? start() : stop()));
    el.dataset.playing = 'false';
    play.disabled = true;

    return {
      el,
      /** The frames to play, `[{frame, url}]`; kept in frame order, the one shown kept where it can be. */
      setFrames(list) {
        const current = frames[at] && frames[at].frame;
        frames = [...list].sort((a, b) => a.frame - b.frame);
        const again = frames.findIndex((f) => f.frame === current);
        at = again >= 0 ? again : 0;
        el.dataset.count = String(frames.length);
        play.disabled = frames.length === 0;
        if (timer === null) show();
      },
      /** The shot's frames per second (null: not known yet); a playing flip-book goes on at the new rate. */
      setFps(value) {
        const next = value && value > 0 ? value : DEFAULT_FPS;
        fpsKnown = Boolean(value && value > 0);
        el.dataset.fps = String(next);
        if (next === fps) {
          if (timer === null) show();
          return;
        }
        fps = next;
        if (timer !== null) start();
        else show();
      },
      stop,
    };
  }

  window.rbFlipbook = { create };
})();
