# One worker thread for the add-on's network calls, and the queue that brings their results back.
# No bpy here: tasks run on the thread and must not touch bpy; their callbacks run on Blender's
# main thread when drain() is called (from a bpy.app.timers tick, see session.py).
import queue
import threading


class Worker:
    """Runs tasks one at a time on a daemon thread. `run(task, done, key)`: `task(post)` runs on the
    thread (`post(fn, *args)` queues `fn(*args)` for the main thread, e.g. progress); then
    `done(result, error)` is queued, error being the exception the task raised or None. A `key`
    keeps one task of that kind queued or running at a time (polls do not pile up)."""

    def __init__(self, name='renderbridge-worker'):
        self._tasks = queue.Queue()
        self._results = queue.Queue()
        self._pending = set()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._thread.start()

    def run(self, task, done=None, key=None):
        """Queues `task`; False (and nothing queued) when a task with the same key is still pending."""
        with self._lock:
            if key is not None:
                if key in self._pending:
                    return False
                self._pending.add(key)
        self._tasks.put((task, done, key))
        return True

    def busy(self, key):
        with self._lock:
            return key in self._pending

    def _loop(self):
        while True:
            item = self._tasks.get()
            if item is None:
                return
            task, done, key = item
            try:
                result, error = task(self._post), None
            except Exception as err:  # reported to the main thread, never raised here
                result, error = None, err
            self._results.put((self._finish, (done, key, result, error)))

    def _post(self, fn, *args):
        self._results.put((fn, args))

    def _finish(self, done, key, result, error):
        with self._lock:
            self._pending.discard(key)
        if done is not None:
            done(result, error)

    def drain(self, limit=100):
        """Runs the queued callbacks on the calling (main) thread; returns how many ran."""
        count = 0
        while count < limit:
            try:
                fn, args = self._results.get_nowait()
            except queue.Empty:
                break
            count += 1
            fn(*args)
        return count

    def stop(self, timeout=1.0):
        """Asks the thread to end after its current task; waits at most `timeout` seconds."""
        self._tasks.put(None)
        self._thread.join(timeout)

    @property
    def alive(self):
        return self._thread.is_alive()
