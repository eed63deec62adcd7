# Unit tests of host-addon/renderbridge/daemon_client.py (no bpy), run with plain python3 by
# python-units.test.ts against real HTTP servers started here.
import http.server
import json
import os
import socket
import sys
import tempfile
import threading
import time
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'host-addon', 'renderbridge'))
import daemon_client  # noqa: E402

TOKEN = 'x' * 43


class FakeDaemon(http.server.BaseHTTPRequestHandler):
    seen = []

    def log_message(self, *_args):
        pass

    def _answer(self, status, body):
        raw = json.dumps(body).encode()
        self.send_response(status)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def _handle(self):
        length = int(self.headers.get('Content-Length') or 0)
        body = json.loads(self.rfile.read(length)) if length else None
        FakeDaemon.seen.append({'method': self.command, 'path': self.path, 'headers': dict(self.headers), 'body': body})
        if 'Origin' in self.headers:
            return self._answer(403, {'name': 'DAEMON_FORBIDDEN_ORIGIN', 'message': 'no origin'})
        if self.headers.get('Authorization') != f'Bearer {TOKEN}':
            return self._answer(401, {'name': 'DAEMON_UNAUTHORIZED', 'message': 'Missing or wrong daemon token.'})
        if self.path == '/health':
            return self._answer(200, {'status': 'ok', 'apiKeyConfigured': True})
        if self.path == '/pack':
            return self._answer(409, {'name': 'NO_API_KEY', 'message': 'No API key is configured: store one with the tray app.',
                                      'details': [], 'type': 'api'})
        if self.path == '/submissions':
            return self._answer(400, {'name': 'VALIDATION_ERROR', 'message': 'Bad render settings.', 'type': 'zod',
                                      'details': [{'path': ['body', 'settings', 'frames', 0], 'message': 'use "N"'}]})
        if self.path == '/jobs':
            return self._answer(200, {'jobs': [{'job': {'id': 'j1'}}]})
        if self.path == '/jobs/a%2Fb/cancel':
            return self._answer(200, {'job': {'id': 'a/b', 'status': 'canceled'}})
        return self._answer(404, {'name': 'DAEMON_NOT_FOUND', 'message': 'nothing here'})

    do_GET = do_POST = _handle


def serve(handler):
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def write_state(folder, port, token=TOKEN):
    path = os.path.join(folder, 'renderbridge', 'daemon.json')
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w') as f:
        json.dump({'version': 1, 'pid': 1, 'port': port, 'token': token, 'startedAt': '', 'daemonVersion': '0'}, f)
    return path


class StateFile(unittest.TestCase):
    def test_xdg_state_home_then_home(self):
        self.assertEqual(daemon_client.state_file_path({'XDG_STATE_HOME': '/s'}), '/s/renderbridge/daemon.json')
        self.assertTrue(daemon_client.state_file_path({}).endswith('/.local/state/renderbridge/daemon.json'))

    def test_absent_state_file_says_how_to_start_the_daemon(self):
        client = daemon_client.DaemonClient(state_path='/nonexistent/daemon.json')
        with self.assertRaises(daemon_client.DaemonError) as ctx:
            client.health()
        self.assertEqual(ctx.exception.name, 'DAEMON_NOT_RUNNING')
        self.assertIn('start it with `renderbridge daemon`', str(ctx.exception))


class Calls(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = serve(FakeDaemon)
        cls.tmp = tempfile.TemporaryDirectory()
        cls.state = write_state(cls.tmp.name, cls.server.server_address[1])

    @classmethod
    def tearDownClass(cls):
        cls.server.shutdown()
        cls.tmp.cleanup()

    def setUp(self):
        FakeDaemon.seen.clear()
        self.client = daemon_client.DaemonClient(state_path=self.state)

    def test_sends_the_token_and_no_origin(self):
        self.assertEqual(self.client.health()['status'], 'ok')
        headers = FakeDaemon.seen[0]['headers']
        self.assertEqual(headers['Authorization'], f'Bearer {TOKEN}')
        self.assertNotIn('Origin', headers)

    def test_no_api_key_error_reads_as_the_daemon_wrote_it(self):
        with self.assertRaises(daemon_client.DaemonError) as ctx:
            self.client.pack('/p/a.blend', [], [])
        self.assertEqual((ctx.exception.name, ctx.exception.status), ('NO_API_KEY', 409))
        self.assertEqual(str(ctx.exception), 'NO_API_KEY: No API key is configured: store one with the tray app.')
        self.assertEqual(FakeDaemon.seen[0]['body'], {'path': '/p/a.blend', 'dependencies': [], 'addons': []})

    def test_error_details_are_listed(self):
        with self.assertRaises(daemon_client.DaemonError) as ctx:
            self.client.submit('pk', {'frames': ['x']}, 'check')
        self.assertEqual(str(ctx.exception), 'VALIDATION_ERROR: Bad render settings. (body.settings.frames.0: use "N")')
        self.assertEqual(FakeDaemon.seen[0]['body'], {'packId': 'pk', 'settings': {'frames': ['x']}, 'mode': 'check'})

    def test_wrong_token_is_unauthorized(self):
        write_state(self.tmp.name, self.server.server_address[1], token='y' * 43)
        try:
            with self.assertRaises(daemon_client.DaemonError) as ctx:
                self.client.jobs()
            self.assertEqual(ctx.exception.status, 401)
        finally:
            write_state(self.tmp.name, self.server.server_address[1])

    def test_ids_are_escaped_in_paths(self):
        self.assertEqual(self.client.cancel('a/b')['job']['status'], 'canceled')
        self.assertEqual(FakeDaemon.seen[0]['path'], '/jobs/a%2Fb/cancel')

    def test_address_preference_overrides_the_port(self):
        client = daemon_client.DaemonClient(address='127.0.0.1:1', state_path=self.state)
        with self.assertRaises(daemon_client.DaemonError) as ctx:
            client.jobs()
        self.assertEqual(ctx.exception.name, 'DAEMON_NOT_RUNNING')
        self.assertIn('127.0.0.1:1', str(ctx.exception))
        self.assertEqual(daemon_client.DaemonClient(address=f'http://127.0.0.1:{self.server.server_address[1]}',
                                                    state_path=self.state).jobs(), [{'job': {'id': 'j1'}}])


class Failures(unittest.TestCase):
    def test_a_port_nobody_listens_on_means_not_running(self):
        with socket.socket() as s:
            s.bind(('127.0.0.1', 0))
            port = s.getsockname()[1]
        with tempfile.TemporaryDirectory() as tmp:
            client = daemon_client.DaemonClient(state_path=write_state(tmp, port))
            with self.assertRaises(daemon_client.DaemonError) as ctx:
                client.health()
        self.assertEqual(ctx.exception.name, 'DAEMON_NOT_RUNNING')
        self.assertIn('renderbridge daemon', str(ctx.exception))

    def test_a_daemon_that_never_answers_times_out(self):
        listener = socket.socket()
        listener.bind(('127.0.0.1', 0))
        listener.listen(5)  # accepts connections (backlog) but never reads or answers
        with tempfile.TemporaryDirectory() as tmp:
            client = daemon_client.DaemonClient(state_path=write_state(tmp, listener.getsockname()[1]), read_timeout=0.5)
            started = time.monotonic()
            with self.assertRaises(daemon_client.DaemonError) as ctx:
                client.jobs()
            took = time.monotonic() - started
        listener.close()
        self.assertEqual(ctx.exception.name, 'DAEMON_TIMEOUT')
        self.assertIn('within 0.5 s', str(ctx.exception))
        self.assertLess(took, 3)

    def test_a_body_that_is_not_an_error_body(self):
        self.assertEqual(daemon_client.error_message(502, None)[1], 'The daemon answered HTTP 502 without an error message.')


if __name__ == '__main__':
    unittest.main()
