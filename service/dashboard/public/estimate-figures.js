// The job page's estimate figures as rows of a <dl>: wall time, compute, normalized seconds, cost,
// peak memory, output size and scene load with their bands, the sample frames, and what the
// estimate itself cost. Pure formatting of the service's Estimate; estimate-view.js shows them.
import { bytes, duration } from './format.js';

const money = (n) => n.toFixed(2);
const seconds1 = (n) => `${n.toFixed(1)} s`;
const bandText = (b, fmt = duration) => `${fmt(b.value)} (${fmt(b.low)} – ${fmt(b.high)})`;

/** One row of figures; the band's numbers ride along as data attributes for tools and tests. */
function row(name, label, text, band) {
  const div = document.createElement('div');
  div.dataset.figure = name;
  const dt = document.createElement('dt');
  dt.textContent = label;
  const dd = document.createElement('dd');
  dd.textContent = text;
  if (band)
    Object.assign(dd.dataset, {
      value: String(band.value),
      low: String(band.low),
      high: String(band.high),
      frames: String(band.frames),
    });
  div.append(dt, dd);
  return div;
}

/** The estimate's state in words. */
export const STATE_WORDS = {
  sampling: 'Rendering sample frames on the farm…',
  ready: 'Ready',
  failed: 'The estimate could not be made',
  canceled: 'Canceled',
};

/** The figure rows of an estimate: the samples, its bands and what the estimate itself cost. */
export function figureRows(e) {
  const f = e.figures;
  const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;
  const rows = [];
  if (e.sampleFrames.length) {
    const of = e.framesTotal !== null ? ` of ${plural(e.framesTotal, 'frame')}` : '';
    rows.push(row('samples', 'Sample frames', `${e.sampleFrames.join(', ')}${of} (kept for the render)`));
  }
  if (f) {
    rows.push(
      row(
        'wall',
        'Wall time on this farm now',
        `${bandText(f.wallSeconds)} for ${plural(f.framesToRender, 'frame')} left, ` +
          `from ${plural(f.wallSeconds.frames, 'sample frame')}`,
        f.wallSeconds,
      ),
      row('compute', 'Compute', `${bandText(f.renderSeconds)} on ${f.device}`, f.renderSeconds),
      row(
        'normalized',
        'Normalized seconds',
        bandText(f.normalizedSeconds, (n) => String(Math.round(n))),
        f.normalizedSeconds,
      ),
      row('cost', 'Cost', f.cost ? bandText(f.cost, money) : 'No price configured', f.cost),
      row('memory', 'Peak memory', f.memory.summary, f.peakMemoryBytes),
    );
    if (f.outputBytes)
      rows.push(
        row(
          'output',
          'Output size',
          bandText(f.outputBytes, (n) => bytes(Math.round(n))),
          f.outputBytes,
        ),
      );
    if (f.loadSeconds)
      rows.push(row('load', 'Scene load', `${bandText(f.loadSeconds, seconds1)} per Blender start`, f.loadSeconds));
  }
  const own = e.ownCost;
  const ownCost = own.cost !== null ? ` · cost ${money(own.cost)}` : ' · no price configured';
  rows.push(
    row(
      'own',
      'The estimate itself',
      `${seconds1(own.renderSeconds)} of rendering · ${Math.round(own.normalizedSeconds)} normalized seconds${ownCost}`,
    ),
  );
  return rows;
}
