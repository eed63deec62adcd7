// The job page's frames (extension frame-thumbnails): a strip of thumbnails instead of a column of
// file names, a flip-book player at the shot's fps (play/pause, a scrubber), and the latest
// finished frame shown live while the job renders. Read from GET /jobs/{id}/thumbnails (signed
// URLs, as downloads are): when the job's frame count moves (the live feed) and every 2 s while it
// renders. Thumbnails already shown keep their URL, so the strip never reloads an image; the
// flip-book draws the strip's own images on a canvas, so playing fetches nothing.
import { api } from './api.js';

const $ = (id) => document.getElementById(id);
const PAGE = 1000;
/** Thumbnails the strip shows at most (the first ones of a longer job). */
const MAX_THUMBS = 3000;

let shownFor = null;
/** frame -> {img, li} of the strip, in frame order. */
let items = new Map();
let order = [];
let fps = 24;
let index = 0;
let timer = null;
let lastRead = 0;
let reading = null;
/** Frame -> download URL of its file, once the job completed (the strip links each frame to it). */
let downloads = new Map();

async function fetchAll(id) {
  const first = await api('GET', `/jobs/${encodeURIComponent(id)}/thumbnails?pageSize=${PAGE}`);
  const thumbs = [...first.data.thumbnails];
  const pages = Math.min(first.pagination.totalPages, Math.ceil(MAX_THUMBS / PAGE));
  for (let page = 2; page <= pages; page++)
    thumbs.push(
      ...(await api('GET', `/jobs/${encodeURIComponent(id)}/thumbnails?page=${page}&pageSize=${PAGE}`)).data.thumbnails,
    );
  return { ...first.data, thumbnails: thumbs };
}

function stripItem(t) {
  const li = document.createElement('li');
  li.dataset.frame = String(t.frame);
  const a = document.createElement('a');
  a.href = downloads.get(t.frame) || t.url;
  a.rel = 'noopener';
  a.title = `Frame ${t.frame}: open the full frame`;
  const img = document.createElement('img');
  img.alt = `Frame ${t.frame}`;
  img.decoding = 'async';
  // The flip-book draws the first frame as soon as it can.
  img.addEventListener('load', () => {
    if (order[index] === t.frame) drawCurrent();
  });
  img.src = t.url;
  const label = document.createElement('span');
  label.textContent = String(t.frame);
  a.append(img, label);
  a.addEventListener('click', (e) => {
    // A plain click shows the frame in the player; a modified click (new tab) opens the file.
    if (e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
    e.preventDefault();
    pause();
    show(order.indexOf(t.frame));
  });
  li.append(a);
  return { img, li, a };
}

function drawCurrent() {
  const frame = order[index];
  const item = items.get(frame);
  const canvas = $('flipbook-canvas');
  if (!item || !canvas) return;
  const { img } = item;
  if (img.complete && img.naturalWidth > 0) {
    if (canvas.width !== img.naturalWidth || canvas.height !== img.naturalHeight) {
      canvas.width = img.naturalWidth;
      canvas.height = img.naturalHeight;
    }
    canvas.getContext('2d').drawImage(img, 0, 0);
  }
  const box = $('flipbook');
  box.dataset.frame = String(frame);
  box.dataset.index = String(index);
  canvas.setAttribute('aria-label', `Frame ${frame} (${index + 1} of ${order.length})`);
  $('flipbook-scrub').value = String(index);
  $('flipbook-frame').textContent = `Frame ${frame} · ${index + 1}/${order.length} · ${fps} fps`;
  for (const [f, it] of items) it.li.classList.toggle('current', f === frame);
}

function show(i) {
  if (order.length === 0) return;
  index = ((i % order.length) + order.length) % order.length;
  drawCurrent();
}

function play() {
  if (timer || order.length < 2) return;
  $('flipbook-play').textContent = 'Pause';
  $('flipbook-play').setAttribute('aria-pressed', 'true');
  $('flipbook').dataset.playing = 'true';
  timer = setInterval(() => show(index + 1), 1000 / fps);
}

function pause() {
  clearInterval(timer);
  timer = null;
  const button = $('flipbook-play');
  if (!button) return;
  button.textContent = 'Play';
  button.setAttribute('aria-pressed', 'false');
  $('flipbook').dataset.playing = 'false';
}

function showLatest(latest, rendering) {
  const box = $('live-frame-box');
  const img = $('live-frame');
  // The live frame is for a job that renders; once it ended the strip and player say it all.
  if (!latest || !rendering) {
    box.hidden = true;
    return;
  }
  // A frame shown already keeps its image (its URL changes with every listing).
  if (img.dataset.frame !== String(latest.frame)) {
    img.dataset.frame = String(latest.frame);
    img.alt = `Latest finished frame: ${latest.frame}`;
    img.onload = () => (box.hidden = false);
    img.src = latest.url;
    $('live-frame-caption').textContent = `Latest finished frame: ${latest.frame}`;
  }
}

function render(data, rendering) {
  fps = data.fps || 24;
  const fresh = data.thumbnails.filter((t) => !items.has(t.frame));
  for (const t of fresh) items.set(t.frame, stripItem(t));
  for (const [frame, it] of items) {
    const url = downloads.get(frame);
    if (url) it.a.href = url;
  }
  if (fresh.length) {
    order = [...items.keys()].sort((a, b) => a - b);
    $('thumbs-strip').replaceChildren(...order.map((f) => items.get(f).li));
    $('flipbook-scrub').max = String(Math.max(0, order.length - 1));
  }
  $('thumbs-section').hidden = false;
  $('thumbs-none').hidden = order.length > 0;
  $('flipbook').hidden = order.length === 0;
  $('thumbs-strip').dataset.count = String(order.length);
  if (fresh.length && !timer) show(index);
  else if (fresh.length) drawCurrent();
  showLatest(data.latest, rendering);
}

/**
 * Refreshes the section for `job`: on each live change of its counters and every 2 s while it
 * renders (`force` once it ended); reads at most once a second.
 */
export async function refreshThumbnails(job, force = false) {
  if (shownFor !== job.id) closeThumbnails();
  shownFor = job.id;
  if (reading || (!force && Date.now() - lastRead < 1000)) return;
  lastRead = Date.now();
  const rendering = ['booting', 'rendering'].includes(job.status);
  reading = fetchAll(job.id)
    .then((data) => {
      if (shownFor === job.id) render(data, rendering);
    })
    .finally(() => (reading = null));
  await reading;
}

/** Links each frame of the strip to its file's download once the job completed (`frameOutputs` of GET /downloads). */
export function setFrameDownloads(outputs) {
  downloads = new Map();
  for (const o of outputs || []) {
    const m = /(\d+)(?!.*\d)/.exec(o.fileName.replace(/\.[^.]*$/, ''));
    if (m && !downloads.has(Number(m[1]))) downloads.set(Number(m[1]), o.url);
  }
  for (const [frame, it] of items) if (downloads.has(frame)) it.a.href = downloads.get(frame);
}

export function closeThumbnails() {
  pause();
  shownFor = null;
  items = new Map();
  order = [];
  index = 0;
  lastRead = 0;
  downloads = new Map();
  const strip = $('thumbs-strip');
  if (!strip) return;
  strip.replaceChildren();
  strip.dataset.count = '0';
  $('thumbs-section').hidden = true;
  $('flipbook').hidden = true;
  $('live-frame-box').hidden = true;
  delete $('live-frame').dataset.frame;
}

/** Wires the player's controls once (app.js calls it at start). */
export function initThumbnails() {
  $('flipbook-play').addEventListener('click', () => (timer ? pause() : play()));
  $('flipbook-scrub').addEventListener('input', (e) => {
    pause();
    show(Number(e.target.value));
  });
  $('flipbook-prev').addEventListener('click', () => {
    pause();
    show(index - 1);
  });
  $('flipbook-next').addEventListener('click', () => {
    pause();
    show(index + 1);
  });
}
