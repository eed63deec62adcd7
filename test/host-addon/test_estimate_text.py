# Unit tests of host-addon/renderbridge/estimate_text.py (no bpy): the Estimate button's figures as the
# panel words them (time, cost and memory with their bands, the frames they rest on, the warnings), and
# when Render on farm may render the estimated job instead of uploading again.
import os
import sys
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'host-addon', 'renderbridge'))
import estimate_text  # noqa: E402


def band(value, low, high, frames=3):
    return {'value': value, 'low': low, 'high': high, 'frames': frames}


def estimate(state='ready', cost=True, warnings=()):
    return {
        'jobId': 'j1', 'state': state, 'reason': None, 'sampleFrames': [1, 50, 100], 'framesTotal': 100,
        'figures': {
            'device': 'CPU', 'framesToRender': 97,
            'wallSeconds': band(130, 110, 160), 'renderSeconds': band(3600, 3300, 4000),
            'normalizedSeconds': band(3600, 3300, 4000), 'cost': band(3.6, 3.3, 4.0) if cost else None,
            'loadSeconds': None, 'outputBytes': band(2.5e9, 2.2e9, 2.9e9),
            'peakMemoryBytes': band(9.1e9, 8.5e9, 10.2e9),
            'memory': {'summary': 'Peak memory about 9.1 GB (up to 10.2 GB): does not fit the 8 GB GPU slots; '
                                  'fits the 64 GB CPU slots.', 'slots': []},
            'queueAheadSeconds': 0,
        },
        'ownCost': {'renderSeconds': 110, 'normalizedSeconds': 110, 'cost': 0.11 if cost else None},
        'warnings': list(warnings), 'startedAt': 'x', 'finishedAt': 'y',
    }


class LinesTests(unittest.TestCase):
    def test_time_cost_memory_with_bands_basis_and_warnings(self):
        lines = estimate_text.lines(estimate(warnings=['Frame times vary 5x along the timeline: the band is wide.']))
        self.assertEqual(lines, [
            'Time on the farm now: 2 min 10 s (1 min 50 s to 2 min 40 s) for 97 frame(s) left',
            'Compute: 1 h 00 min (55 min 00 s to 1 h 06 min) on CPU',
            'Cost: 3.60 (3.30 to 4.00)',
            'Memory: Peak memory about 9.1 GB (up to 10.2 GB): does not fit the 8 GB GPU slots; '
            'fits the 64 GB CPU slots.',
            'Output: 2.5 GB (2.2 GB to 2.9 GB)',
            'Rests on 3 sample(s) from frames 1, 50, 100',
            'The estimate itself took 1 min 50 s of rendering, cost 0.11',
            'Warning: Frame times vary 5x along the timeline: the band is wide.',
        ])

    def test_without_a_price_and_while_sampling(self):
        lines = estimate_text.lines(estimate(state='sampling', cost=False))
        self.assertEqual(lines[0], 'So far (sampling, from frames 1, 50, 100):')
        self.assertIn('Cost: no price is set on this farm', lines)
        self.assertFalse(any(line.startswith('The estimate itself') for line in lines))
        first = dict(estimate(state='sampling'), figures=None, sampleFrames=[])
        self.assertEqual(estimate_text.lines(first), ['Rendering sample frames on the farm...'])
        self.assertEqual(estimate_text.lines(None), [])
        self.assertEqual(estimate_text.lines(dict(estimate(state='failed'), figures=None)), [])

    def test_units(self):
        self.assertEqual([estimate_text.duration(s) for s in (0.4, 59, 61, 3599, 3661)],
                         ['0 s', '59 s', '1 min 01 s', '59 min 59 s', '1 h 01 min'])
        self.assertEqual([estimate_text.size(n) for n in (512, 2048, 1.5e6, 12e9)],
                         ['512 B', '2.0 KB', '1.5 MB', '12 GB'])


class PlanTests(unittest.TestCase):
    def test_reusable_only_for_the_same_file_unchanged_and_the_same_settings(self):
        settings = {'frames': ['1-100'], 'renderConfig': {'notes': 'a'}}
        plan = estimate_text.Plan(settings, '/p/shot.blend', 10)
        self.assertFalse(plan.reusable(settings, '/p/shot.blend', 10), 'no job yet')
        plan.job_id = 'j1'
        self.assertTrue(plan.reusable({'renderConfig': {'notes': 'a'}, 'frames': ['1-100']}, '/p/shot.blend', 10))
        self.assertFalse(plan.reusable(settings, '/p/shot.blend', 11), 'saved since')
        self.assertFalse(plan.reusable(settings, '/p/other.blend', 10))
        self.assertFalse(plan.reusable({'frames': ['1-50'], 'renderConfig': {'notes': 'a'}}, '/p/shot.blend', 10))


if __name__ == '__main__':
    unittest.main()
