# Unit tests of host-addon/renderbridge/background.py (no bpy): tasks run off the calling thread,
# results and progress come back only through drain(), keyed tasks never pile up.
import os
import sys
import threading
import time
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'host-addon', 'renderbridge'))
import background  # noqa: E402


def drain_until(worker, cond, timeout=5.0):
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError('timed out')
        worker.drain()
        time.sleep(0.01)


class WorkerTests(unittest.TestCase):
    def setUp(self):
        self.worker = background.Worker()

    def tearDown(self):
        self.worker.stop()

    def test_task_runs_on_another_thread_and_its_result_comes_back_on_drain(self):
        main = threading.get_ident()
        got = []
        self.worker.run(lambda post: threading.get_ident(),
                        lambda res, err: got.append((res, err, threading.get_ident())))
        # Tasks run in order: once the next one has run, the first one's result is queued.
        after = threading.Event()
        self.worker.run(lambda post: after.set())
        self.assertTrue(after.wait(5))
        self.assertEqual(got, [])  # nothing runs on the main thread until drained
        drain_until(self.worker, lambda: got)
        task_thread, err, callback_thread = got[0]
        self.assertNotEqual(task_thread, main)
        self.assertIsNone(err)
        self.assertEqual(callback_thread, main)

    def test_errors_are_handed_to_the_callback(self):
        got = []

        def boom(_post):
            raise ValueError('no daemon')
        self.worker.run(boom, lambda res, err: got.append((res, err)))
        drain_until(self.worker, lambda: got)
        self.assertIsNone(got[0][0])
        self.assertEqual(str(got[0][1]), 'no daemon')

    def test_progress_is_posted_in_order_before_the_result(self):
        seen = []

        def task(post):
            post(seen.append, 'packing')
            post(seen.append, 'uploading')
            return 'done'
        self.worker.run(task, lambda res, err: seen.append(res))
        drain_until(self.worker, lambda: len(seen) == 3)
        self.assertEqual(seen, ['packing', 'uploading', 'done'])

    def test_a_keyed_task_is_not_queued_twice_until_its_result_is_drained(self):
        release = threading.Event()
        got = []
        self.assertTrue(self.worker.run(lambda p: release.wait(5), lambda r, e: got.append(r), key='jobs'))
        self.assertFalse(self.worker.run(lambda p: 'second', lambda r, e: got.append(r), key='jobs'))
        self.assertTrue(self.worker.busy('jobs'))
        release.set()
        drain_until(self.worker, lambda: got)
        self.assertFalse(self.worker.busy('jobs'))
        self.assertTrue(self.worker.run(lambda p: 'third', lambda r, e: got.append(r), key='jobs'))
        drain_until(self.worker, lambda: len(got) == 2)
        self.assertEqual(got, [True, 'third'])

    def test_stop_ends_the_thread(self):
        self.worker.stop()
        self.assertFalse(self.worker.alive)


if __name__ == '__main__':
    unittest.main()
