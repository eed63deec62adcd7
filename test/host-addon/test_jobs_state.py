# Unit tests of host-addon/renderbridge/jobs_state.py and submit_body.py (no bpy): what the panel
# shows of GET /jobs and of a submission (a failed one included), the body of POST /submissions, and
# what the buttons say when they cannot start. addon-messages-e2e.test.ts causes each for real.
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
            tracked('a', 'completed', '2024-01-01',
                    download={'state': 'done', 'outDir': '/out/a', 'files': 3, 'filesDone': 3}),
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

    def test_a_row_says_when_its_previews_await_approval(self):
        row = tracked('a', 'rendering', '1')
        self.assertFalse(jobs_state.JobRow(row).awaiting_approval)
        row['job']['scheduling'] = {'previews': {'frames': [1, 5, 9], 'gate': 'waiting'}}
        self.assertTrue(jobs_state.JobRow(row).awaiting_approval)
        row['job']['scheduling'] = {'previews': {'frames': [1, 5, 9], 'gate': 'approved'}}
        self.assertFalse(jobs_state.JobRow(row).awaiting_approval)

    def test_replace_updates_one_row(self):
        model = jobs_state.JobsModel()
        model.update([tracked('a', 'rendering', '1'), tracked('b', 'rendering', '2')])
        model.replace(tracked('a', 'canceled', '1'))
        self.assertEqual(model.find('a').status, 'canceled')
        self.assertEqual(model.find('b').status, 'rendering')


class ActivityTests(unittest.TestCase):
    def test_failed_submission_carries_the_error_name_and_message(self):
        act = jobs_state.Activity('render')
        ended = act.apply_submission(
            {'step': 'failed', 'jobId': None, 'error': {'name': 'NO_API_KEY', 'message': 'Store one.'}})
        self.assertTrue(ended)
        self.assertEqual(act.error, 'NO_API_KEY: Store one.')

    def test_a_failed_pack_shows_the_daemons_error_name_and_message(self):
        act = jobs_state.Activity('render')
        act.step, act.message = 'packing', 'Packing the project...'
        got = act.apply_pack(
            {'state': 'failed', 'error': {'name': 'PACK_FAILED', 'message': 'The folder cannot be made.'}})
        self.assertEqual(got, 'failed')
        self.assertEqual((act.step, act.finished, act.transfer), ('failed', True, None))
        self.assertEqual(act.error, 'PACK_FAILED: The folder cannot be made.')
        # The panel's title line no longer says the step it was on.
        self.assertEqual(act.message, 'Failed')

    def test_every_submission_failure_is_name_colon_message(self):
        for name in ('PACK_CHANGED', 'SERVICE_UNREACHABLE', 'SUBMISSION_FAILED', 'PACK_FAILED', 'JOB_CANCELED'):
            act = jobs_state.Activity('check')
            self.assertTrue(act.apply_submission({'step': 'failed', 'error': {'name': name, 'message': 'Do this.'}}))
            self.assertEqual(act.error, f'{name}: Do this.')
        act = jobs_state.Activity('check')
        act.apply_submission({'step': 'failed', 'error': None})
        self.assertEqual(act.error, 'SUBMISSION_FAILED: the submission failed')

    def test_a_pack_or_submission_the_daemon_no_longer_has_ends_the_activity(self):
        class Err(Exception):
            def __init__(self, status, text):
                super().__init__(text)
                self.status = status

        act = jobs_state.Activity('render')
        self.assertTrue(act.read_failed('pack', Err(404, 'DAEMON_NOT_FOUND: No pack p.')))
        self.assertEqual((act.step, act.finished), ('failed', True))
        self.assertEqual(act.error, 'Could not read the pack: the daemon no longer has it (it was restarted, or the '
                                    'pack expired), so nothing was sent: press "Render on farm" again.')
        act = jobs_state.Activity('check')
        self.assertTrue(act.read_failed('submission', Err(404, 'DAEMON_NOT_FOUND: No submission s.')))
        self.assertEqual(act.error, 'Could not read the submission: the daemon no longer has it (it was restarted): '
                                    'see Recent jobs for its job; if it is not there, press "Check" again.')

    def test_a_daemon_that_does_not_answer_a_poll_is_shown_and_polled_again(self):
        class Err(Exception):
            status = None

        act = jobs_state.Activity('render')
        act.step = 'packing'
        self.assertFalse(act.read_failed('pack', Err('The renderbridge daemon is not running: start it.')))
        self.assertEqual(act.message, 'Could not read the pack: The renderbridge daemon is not running: start it.')
        self.assertEqual((act.step, act.finished, act.error), ('packing', False, None))

    def test_analysis_warnings_blocking_from_the_flag_or_the_code(self):
        act = jobs_state.Activity('check')
        act.apply_analysis({'job': {'analysis': {'output': {'analysisWarnings': [
            {'code': 'MISSING_FILES', 'message': '1 file missing', 'blocking': False},
            {'code': 'NO_CAMERA', 'message': 'no camera', 'blocking': False},
            {'code': 'OTHER', 'message': 'x', 'blocking': True}]}}}})
        self.assertEqual([w['code'] for w in act.blocking], ['NO_CAMERA', 'OTHER'])

    def test_a_failed_validation_shows_the_warnings_it_failed_with(self):
        act = jobs_state.Activity('check')
        act.apply_analysis({'job': {'status': 'failed', 'analysis': None, 'failedReason': {'errorDetails': {
            'warnings': [{'code': 'NO_CAMERA', 'message': 'The scene has no camera', 'blocking': True}]}}}})
        self.assertEqual(act.blocking, [{'code': 'NO_CAMERA', 'message': 'The scene has no camera', 'blocking': True}])


class SubmitBodyTests(unittest.TestCase):
    def test_frame_ranges(self):
        self.assertEqual(submit_body.parse_frame_ranges(' 1-10, 20 30-40x2;7'), ['1-10', '20', '30-40x2', '7'])
        for bad, why in (('', 'at least one'), ('1-', 'not a frame range'), ('5-2', 'comes after'),
                         ('a', 'not a frame range')):
            with self.assertRaises(ValueError) as ctx:
                submit_body.parse_frame_ranges(bad)
            self.assertIn(why, str(ctx.exception))

    def test_settings_leave_out_what_is_not_chosen(self):
        self.assertEqual(submit_body.build_settings(frames=['1-3']), {'frames': ['1-3']})
        self.assertEqual(submit_body.build_settings(frames=['1'], camera='CamB', view_layer='Main', output_format='PNG',
                                                    video=True, notes=' hi '),
                         {'frames': ['1'], 'camera': 'CamB', 'viewLayer': 'Main', 'format': 'PNG', 'video': True,
                          'renderConfig': {'notes': 'hi'}})

    def test_settings_send_scheduling_only_when_it_differs_from_the_farm_defaults(self):
        self.assertNotIn('scheduling', submit_body.build_settings(frames=['1'], priority=50, preview_frames=True))
        self.assertEqual(submit_body.build_settings(priority=80)['scheduling'], {'priority': 80})
        self.assertEqual(submit_body.build_settings(preview_frames=False)['scheduling'], {'previewFrames': False})
        self.assertEqual(submit_body.build_settings(required_tags=['gpu:a4000'])['scheduling'],
                         {'requiredTags': ['gpu:a4000']})

    def test_required_tags(self):
        self.assertEqual(submit_body.parse_required_tags(''), [])
        self.assertEqual(submit_body.parse_required_tags(' gpu:a4000, site:paris;gpu:a4000 '),
                         ['gpu:a4000', 'site:paris'])
        for bad, why in (('gpu a4000!', 'not a worker tag'), ('-gpu', 'not a worker tag'),
                         (','.join(f't{i}' for i in range(17)), 'At most 16')):
            with self.assertRaises(ValueError) as ctx:
                submit_body.parse_required_tags(bad)
            self.assertIn(why, str(ctx.exception))

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

    def test_save_hint_of_the_panel(self):
        # Drawn in a real window too: save-first-window.test.ts.
        level, text = submit_body.save_hint('', False)
        self.assertEqual(level, 'ERROR')
        self.assertIn('File > Save As', text)
        level, text = submit_body.save_hint('/p/shot.blend', True)
        self.assertEqual(level, 'INFO')
        self.assertIn('save them first', text)
        self.assertIsNone(submit_body.save_hint('/p/shot.blend', False))

    def test_what_the_buttons_say_when_they_cannot_start(self):
        self.assertEqual(submit_body.save_first('Render on farm'),
                         'Save the file first, then click "Render on farm" again.')
        # Blender's RuntimeError text: "Error: " first, a newline last.
        err = RuntimeError('Error: Cannot open file /gone/shot.blend@ for writing: No such file or directory\n')
        self.assertEqual(submit_body.could_not_save('/gone/shot.blend', err),
                         'Could not save /gone/shot.blend (Cannot open file /gone/shot.blend@ for writing: No such '
                         'file or directory): the farm renders the saved file, so nothing was sent. Save it where you '
                         'can write (File > Save As), then try again.')
        self.assertEqual(submit_body.not_on_disk('/p/shot.blend'),
                         '/p/shot.blend is no longer on disk (moved or deleted since it was opened), so there is '
                         'nothing to pack: save it again (File > Save As), then try again.')
        self.assertIn('choose one of its view layers', submit_body.no_view_layer('Gone', 'Scene'))
        for text in (submit_body.NEVER_SAVED, submit_body.save_first('Check'), submit_body.could_not_save('/a', err),
                     submit_body.not_on_disk('/a')):
            self.assertRegex(text, r'then (try|click .* again)')

    def test_output_folder(self):
        self.assertIsNone(submit_body.output_folder('', '/p/shot.blend'))
        got = submit_body.output_folder('/dl', '/p/shot.blend', now=0)
        self.assertRegex(got, r'^/dl/shot-19(69|70)\d{4}-\d{6}$')


if __name__ == '__main__':
    unittest.main()
