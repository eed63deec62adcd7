// The profile's submission defaults sit beneath what a submission sets: the render body a
// submission sends (renderConfigFrom) shows the submission's own choices over the profile's.
import { describe, expect, it } from 'vitest';
import { withSubmitDefaults } from '../../daemon/submit/defaults.js';
import { renderConfigFrom } from '../../daemon/submit/steps.js';

const PROFILE = {
  outputFormat: 'JPEG',
  video: false,
  overrides: { sampleCount: 2, notes: 'profile', colorManagementPreset: 'aces' },
};

describe('submission defaults', () => {
  it('fill what the submission leaves open', () => {
    expect(renderConfigFrom(withSubmitDefaults({ frames: ['1'] }, PROFILE))).toEqual({
      colorManagementPreset: 'aces',
      sampleCount: 2,
      notes: 'profile',
      outputFormat: 'JPEG',
      videoOutput: false,
      frameRanges: ['1'],
    });
  });

  it("lose to the submission's own renderConfig fields and named settings", () => {
    const body = renderConfigFrom(
      withSubmitDefaults(
        { format: 'PNG', video: true, renderConfig: { sampleCount: 9, outputFormat: 'TIFF' } },
        PROFILE,
      ),
    );
    expect(body).toMatchObject({ sampleCount: 9, outputFormat: 'PNG', videoOutput: true, notes: 'profile' });
  });

  it('change nothing when the profile sets none', () => {
    const settings = { frames: ['1-3'] };
    expect(withSubmitDefaults(settings, { outputFormat: null, video: null, overrides: {} })).toBe(settings);
  });
});
