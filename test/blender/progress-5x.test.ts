// The worker's progress parser on Blender 5.x's logger lines (pure; lines copied from Blender 5.2.2
// renders on this machine). render-matrix.test.ts feeds it real output of every build; this pins the
// line shapes, including the logged ERROR and WARNING lines no render there prints.
import { describe, expect, it } from 'vitest';
import { BlenderLogParser } from '../../blender/render/progress-parser.js';

const FRAME_2 = [
  '00:01.659  render           | Fra: 2 | Mem: 1M | Updating Scene BVH | Building BVH',
  '00:01.659  render           | Fra: 2 | Mem: 1M | Sample 0/4',
  '00:01.660  render           | Fra: 2 | Remaining: 00:00.00 | Mem: 1M | Sample 1/4',
  '00:01.662  render           | Fra: 2 | Mem: 1M | Sample 4/4',
  '00:01.662  render           | Fra: 2 | Mem: 1M | Finished',
  "00:02.253  render           | Saved: '/w/comp/FileOut/beauty_0002.png'",
  "00:01.664  render           | Saved: '/w/frames/f_0002.png'",
  '00:01.664  render           | Time: 00:00.27 (Saving: 00:00.18)',
];

describe('BlenderLogParser on Blender 5.x lines', () => {
  it('reads a frame: started, samples, every saved file, finished with its time', () => {
    expect(new BlenderLogParser().lines(FRAME_2.join('\n'))).toEqual([
      { type: 'frameStarted', frame: 2 },
      { type: 'sample', frame: 2, done: 0, total: 4 },
      { type: 'sample', frame: 2, done: 1, total: 4 },
      { type: 'sample', frame: 2, done: 4, total: 4 },
      { type: 'saved', frame: 2, path: '/w/comp/FileOut/beauty_0002.png' },
      { type: 'saved', frame: 2, path: '/w/frames/f_0002.png' },
      { type: 'frameFinished', frame: 2, seconds: 0.27 },
    ]);
  });

  it('takes a logged ERROR as an error of the frame and a WARNING as a warning; other categories say nothing', () => {
    const p = new BlenderLogParser();
    p.line('00:02.241  render           | Fra: 1 | Mem: 0M | Initializing');
    expect(
      p.line('00:01.947  reports          | ERROR Invalid path template in File Output node. Skipping writing file.'),
    ).toEqual([
      { type: 'error', frame: 1, message: 'Invalid path template in File Output node. Skipping writing file.' },
    ]);
    expect(
      p.line('00:02.193  cycles           | WARNING CUEW initialization failed: Error opening the library'),
    ).toEqual([{ type: 'warning', frame: 1, message: 'CUEW initialization failed: Error opening the library' }]);
    expect(p.line('00:01.411  render           | Rendering frame 1')).toEqual([]);
    expect(p.line('00:01.413  cycles           | Using AVX2 CPU kernels.')).toEqual([]);
    // Lines printed without the logger keep their 3.x/4.x meaning.
    expect(p.line('Error: Cannot read blend file')).toEqual([
      { type: 'error', frame: 1, message: 'Cannot read blend file' },
    ]);
  });
});
