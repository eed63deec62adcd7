# Unit tests of host-addon/renderbridge/transfer_text.py and the activity's transfer line
# (jobs_state.Activity.apply_pack / apply_submission), no bpy: what the panel shows while the
# daemon packs and uploads, from PackState and Submission bodies as the daemon sends them.
import os
import sys
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'host-addon', 'renderbridge'))
import jobs_state  # noqa: E402
import transfer_text  # noqa: E402

MB = 1000 * 1000


def transfer(done, total, rate=0, eta=None):
    return {'bytesDone': done, 'bytesTotal': total, 'bytesPerSecond': rate, 'etaSeconds': eta}


def pack_state(state='packing', phase='hashing', progress=None, result=None, error=None):
    return {'packId': 'p1', 'state': state, 'phase': phase, 'progress': progress or transfer(0, 0),
            'result': result, 'error': error, 'createdAt': 'x', 'updatedAt': 'x'}


def submission(step, pack=None, upload=None, uploaded=0, total=0):
    return {'id': 's1', 'step': step, 'jobId': None, 'pack': pack, 'upload': upload,
            'uploadedBytes': uploaded, 'totalBytes': total, 'error': None}


class FormatTests(unittest.TestCase):
    def test_bytes_in_decimal_units(self):
        cases = [(0, '0 B'), (999, '999 B'), (1000, '1.0 kB'), (1_500_000, '1.5 MB'), (120 * MB, '120 MB'),
                 (999_960, '1.0 MB'), (2_100_000_000, '2.1 GB'), (None, '0 B')]
        self.assertEqual([transfer_text.format_bytes(n) for n, _ in cases], [t for _, t in cases])

    def test_durations(self):
        self.assertEqual([transfer_text.format_duration(s) for s in (0, 4.6, 65, 3725)],
                         ['0 s', '5 s', '1 min 05 s', '1 h 02 min'])

    def test_the_packing_line_of_the_issue(self):
        line = transfer_text.pack_line(pack_state(progress=transfer(120 * MB, 500 * MB, 80 * MB, 4.8)))
        self.assertEqual(line, 'Packing 120 MB / 500 MB \u00b7 80 MB/s \u00b7 5 s left')

    def test_rate_and_time_left_only_once_known(self):
        self.assertEqual(transfer_text.pack_line(pack_state(progress=transfer(64_000, 500 * MB))),
                         'Packing 64 kB / 500 MB')
        self.assertEqual(transfer_text.pack_line(pack_state(phase=None)), 'Packing...')
        self.assertEqual(transfer_text.pack_line(pack_state(phase='tracing')),
                         'Finding the files the scene uses (Blender)...')
        self.assertEqual(transfer_text.pack_line(pack_state(phase='zipping', progress=transfer(MB, 2 * MB, MB, 1))),
                         'Zipping 1.0 MB / 2.0 MB \u00b7 1.0 MB/s \u00b7 1 s left')

    def test_ready_and_failed_packs(self):
        ready = pack_state('ready', None, result={'fileCount': 12, 'bytes': 500 * MB})
        self.assertEqual(transfer_text.pack_line(ready), 'Packed 12 file(s), 500 MB')
        failed = pack_state('failed', 'hashing',
                            error={'name': 'PACK_FAILED', 'message': '"/p/a.png" could not be read'})
        self.assertEqual(transfer_text.pack_line(failed), 'Packing failed: "/p/a.png" could not be read')

    def test_the_upload_line_names_what_the_farm_already_had(self):
        up = dict(transfer(40 * MB, 160 * MB, 20 * MB, 6), mode='blobs', bytesSkipped=340 * MB, retries=0)
        self.assertEqual(transfer_text.upload_line(up),
                         'Uploading 40 MB / 160 MB \u00b7 20 MB/s \u00b7 6 s left (340 MB already on the farm)')
        single = dict(transfer(5 * MB, 10 * MB), mode='single-put', bytesSkipped=0, retries=2)
        self.assertEqual(transfer_text.upload_line(single), 'Uploading 5.0 MB / 10 MB, 2 retries')

    def test_submission_lines_by_step(self):
        self.assertEqual(transfer_text.submission_line(submission('packing', pack=transfer(MB, 4 * MB, MB, 3))),
                         'Packing 1.0 MB / 4.0 MB \u00b7 1.0 MB/s \u00b7 3 s left')
        # A daemon that reports no upload Transfer yet: the byte counters still give a line.
        self.assertEqual(transfer_text.submission_line(submission('uploading', uploaded=MB, total=2 * MB)),
                         'Uploading 1.0 MB / 2.0 MB')
        zipping = submission('uploading', pack=transfer(MB, 2 * MB, MB, 1), total=2 * MB)
        self.assertEqual(transfer_text.submission_line(zipping),
                         'Zipping 1.0 MB / 2.0 MB \u00b7 1.0 MB/s \u00b7 1 s left')
        self.assertIsNone(transfer_text.submission_line(submission('rendering')))


class ActivityTransferTests(unittest.TestCase):
    def test_follows_the_pack_then_the_submission(self):
        act = jobs_state.Activity('render')
        self.assertIsNone(act.apply_pack(pack_state(progress=transfer(120 * MB, 500 * MB, 80 * MB, 4.8))))
        self.assertEqual(act.transfer, 'Packing 120 MB / 500 MB \u00b7 80 MB/s \u00b7 5 s left')
        ready = pack_state('ready', None, result={
            'fileCount': 3, 'bytes': 500 * MB, 'warnings': [{'code': 'MISSING_FILES', 'message': '1 file missing'}]})
        self.assertEqual(act.apply_pack(ready), 'ready')
        self.assertEqual(act.pack_warnings, ['1 file missing'])
        up = dict(transfer(0, 160 * MB), mode='blobs', bytesSkipped=340 * MB, retries=0)
        self.assertFalse(act.apply_submission(submission('uploading', upload=up)))
        self.assertEqual(act.transfer, 'Uploading 0 B / 160 MB (340 MB already on the farm)')
        act.apply_submission(submission('validating'))
        self.assertIsNone(act.transfer)

    def test_a_failed_pack_fails_the_activity_with_its_error(self):
        act = jobs_state.Activity('check')
        err = {'name': 'PACK_FAILED', 'message': 'The main .blend does not exist'}
        self.assertEqual(act.apply_pack(pack_state('failed', error=err)), 'failed')
        self.assertEqual((act.finished, act.step, act.error),
                         (True, 'failed', 'PACK_FAILED: The main .blend does not exist'))
        self.assertIsNone(act.transfer)


if __name__ == '__main__':
    unittest.main()
