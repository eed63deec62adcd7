# Unit tests of host-addon/renderbridge/jobs_state.py and submit_body.py (no bpy): what the panel
# shows of GET /jobs and of a submission, and the body of POST /submissions.
import os
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'host-addon', 'renderbridge'))
import jobs_state  # noqa: E402
import submit_body  # noqa: E402


def tracked(job_id, status, created, progress=None, download=None, name='shot.blend'):
    return {'job': {'id': job_id, 'status': status, 'createdAt': created, 'sceneFile': {'name': name}},
            'progress': progress, 'download': download}


class JobsModelTests(unittest.TestCase):
    def test_newest_first_limited_with_progress_and_download(self):
        model = jobs_state.JobsModel(limit=2)
        model.update([
            tracked('a', 'completed', '2024-01-01', download={'state': 'done', 'outDir': '/out/a', 'files': 3, 'filesDone': 3}),
            tracked('b', 'rendering', '2024-01-03', progress={'percent': 42.4, 'framesDone': 1, 'framesTotal': 3}),
            tracked('c', 'failed', '2024-01-02'),
        ])
        self.assertEqual([r.id for r in model.rows], ['b', 'c'])
        self.assertEqual(model.rows[0].label(), 'shot.blend: rendering 42% (1/3 frames)')
        self.assertTrue(model.any_active)
        self.assertTrue(model.rows[0].cancelable)
        self.assertFalse(model.rows[1].cancelable)
        done = jobs_state.JobRow(tracked('a', 'completed', 'x', download={'state': 'done', 'outDir': '/out/a'}))
        self.assertEqual((done.label(), done.out_dir), ('shot.blend: completed, downloaded', '/out/a'))

    def test_replace_updates_one_row(self):
        model = jobs_state.JobsModel()
        model.update([tracked('a', 'rendering', '1'), tracked('b', 'rendering', '2')])
        model.replace(tracked('a', 'canceled', '1'))
        self.assertEqual(model.find('a').status, 'canceled')
        self.assertEqual(model.find('b').status, 'rendering')


class ActivityTests(unittest.TestCase):
    def test_failed_submission_carries_the_error_name_and_message(self):
        act = jobs_state.Activity('render')
        ended = act.apply_submission({'step': 'failed', 'jobId': None, 'error': {'name': 'NO_API_KEY', 'message': 'Store one.'}})
        self.assertTrue(ended)
        self.assertEqual(act.error, 'NO_API_KEY: Store one.')

    def test_analysis_warnings_blocking_from_the_flag_or_the_code(self):
        act = jobs_state.Activity('check')
        act.apply_analysis({'job': {'analysis': {'output': {'analysisWarnings': [
            {'code': 'MISSING_FILES', 'message': '1 file missing', 'blocking': False},
            {'code': 'NO_CAMERA', 'message': 'no camera', 'blocking': False},
            {'code': 'OTHER', 'message': 'x', 'blocking': True}]}}}})
        self.assertEqual([w['code'] for w in act.blocking], ['NO_CAMERA', 'OTHER'])

    def test_a_failed_validation_shows_the_warnings_it_failed_with(self):
        act = jobs_state.Activity('check')
        act.apply_analysis({'job': {'status': 'failed', 'analysis': None, 'failedReason': {'errorDetails': {'warnings': [
            {'code': 'NO_CAMERA', 'message': 'The scene has no camera', 'blocking': True}]}}}})
        self.assertEqual(act.blocking, [{'code': 'NO_CAMERA', 'message': 'The scene has no camera', 'blocking': True}])


class SubmitBodyTests(unittest.TestCase):
    def test_frame_ranges(self):
        self.assertEqual(submit_body.parse_frame_ranges(' 1-10, 20 30-40x2;7'), ['1-10', '20', '30-40x2', '7'])
        for bad, why in (('', 'at least one'), ('1-', 'not a frame range'), ('5-2', 'comes after'), ('a', 'not a frame range')):
            with self.assertRaises(ValueError) as ctx:
                submit_body.parse_frame_ranges(bad)
            self.assertIn(why, str(ctx.exception))

    def test_settings_leave_out_what_is_not_chosen(self):
        self.assertEqual(submit_body.build_settings(frames=['1-3']), {'frames': ['1-3']})
        self.assertEqual(submit_body.build_settings(frames=['1'], camera='CamB', view_layer='Main', output_format='PNG',
                                                    video=True, notes=' hi '),
                         {'frames': ['1'], 'camera': 'CamB', 'viewLayer': 'Main', 'format': 'PNG', 'video': True,
                          'renderConfig': {'notes': 'hi'}})

    def test_missing_files_by_pattern(self):
        with tempfile.TemporaryDirectory() as tmp:
            present = os.path.join(tmp, 'a.png')
            open(present, 'w').close()
            deps = [{'path': '//a.png', 'absolute': present, 'pattern': 'file'},
                    {'path': '//b.png', 'absolute': os.path.join(tmp, 'b.png'), 'pattern': 'file'},
                    {'path': '//t.<UDIM>.png', 'absolute': '', 'pattern': 'udim', 'files': []},
                    {'path': '//s_01.png', 'absolute': '', 'pattern': 'sequence', 'files': [present]},
                    {'path': '//cache', 'absolute': tmp, 'pattern': 'directory'}]
            missing = submit_body.missing_files(deps)
        self.assertEqual([d['path'] for d in missing], ['//b.png', '//t.<UDIM>.png'])
        self.assertEqual(submit_body.describe_missing(missing, limit=1), '2 missing file(s): //b.png and 1 more')

    def test_save_plan(self):
        self.assertEqual(submit_body.save_plan('', False), 'save_as')
        self.assertEqual(submit_body.save_plan('', True), 'save_as')
        self.assertEqual(submit_body.save_plan('/p/shot.blend', True), 'save')
        self.assertEqual(submit_body.save_plan('/p/shot.blend', False), 'ok')
        self.assertIn('File > Save As', submit_body.NEVER_SAVED)

    def test_output_folder(self):
        self.assertIsNone(submit_body.output_folder('', '/p/shot.blend'))
        got = submit_body.output_folder('/dl', '/p/shot.blend', now=0)
        self.assertRegex(got, r'^/dl/shot-19(69|70)\d{4}-\d{6}$')


if __name__ == '__main__':
    unittest.main()
