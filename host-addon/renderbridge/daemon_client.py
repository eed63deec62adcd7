# The add-on's client of the bridge daemon's local API (shared/daemon/api.ts). No bpy: it runs on
# the background thread only. It finds the daemon through its state file (port and token), sends
# `Authorization: Bearer <token>`, never an Origin header, and every call has a short timeout.
# Failures are DaemonError with a message an artist can act on. The add-on never holds the API key:
# the daemon does.
#
# Loopback only: the daemon listens on 127.0.0.1, and the token it hands out (in its state file)
# must never leave this computer. An address preference whose host is not 127.0.0.1, ::1 or
# localhost is refused before the state file is read (check_address), and every connection is
# made to a loopback IP address only (localhost is resolved and held to loopback answers).
#
# Blender's "Allow Online Access" (bpy.app.online_access, 4.2+): Blender's extension rules ask
# add-ons to check it before they use the internet. This add-on never does: its only connection is
# this one, to a program on the same computer over loopback, which is not online access. So the
# add-on works the same whether online access is on or off; it is the daemon, a separate program
# the artist installed and configured, that talks to the farm (often on the studio's own network).
import http.client
import ipaddress
import json
import os
import socket
from urllib.parse import quote, urlsplit

CONNECT_TIMEOUT = 3.0
READ_TIMEOUT = 5.0

NOT_RUNNING = ('The renderbridge daemon is not running: start it with `renderbridge daemon` '
               '(or start the tray app), then try again.')


def state_file_path(env=None):
    """`$XDG_STATE_HOME/renderbridge/daemon.json` (default `~/.local/state/renderbridge/daemon.json`)."""
    env = os.environ if env is None else env
    base = env.get('XDG_STATE_HOME') or os.path.join(os.path.expanduser('~'), '.local', 'state')
    return os.path.join(base, 'renderbridge', 'daemon.json')


LOOPBACK_HOSTS = ('127.0.0.1', '::1', 'localhost')


class DaemonError(Exception):
    """A failed call: `name` is the error name (the daemon's or the service's), `status` the HTTP status or None."""

    def __init__(self, name, message, status=None, details=None):
        super().__init__(message)
        self.name = name
        self.message = message
        self.status = status
        self.details = details or []

    def __str__(self):
        return self.message


def not_local_message(what):
    return (f'Daemon address refused: {what}. The add-on only talks to the renderbridge daemon on this '
            'computer (127.0.0.1, ::1 or localhost), so that its access token never leaves it: '
            'clear "Daemon address" in the add-on preferences, or set e.g. http://127.0.0.1:47615.')


def parse_address(address):
    """(host, port or None) of the daemon address preference ('' -> (None, None)); DaemonError
    DAEMON_ADDRESS_REFUSED unless it is plain http on 127.0.0.1, ::1 or localhost."""
    address = (address or '').strip()
    if not address:
        return None, None
    parts = urlsplit(address if '://' in address else 'http://' + address)
    if parts.scheme.lower() != 'http':
        raise DaemonError('DAEMON_ADDRESS_REFUSED', not_local_message(f'"{address}" is not an http:// address'))
    host = (parts.hostname or '').lower()
    if host not in LOOPBACK_HOSTS:
        raise DaemonError('DAEMON_ADDRESS_REFUSED', not_local_message(f'"{host or address}" is not this computer'))
    try:
        port = parts.port
    except ValueError:
        port = -1
    if port is not None and not 0 < port < 65536:
        raise DaemonError('DAEMON_ADDRESS_REFUSED', not_local_message(f'"{address}" has no valid port'))
    return host, port


def check_address(address):
    """The message that refuses the daemon address preference, None when it is allowed (also empty)."""
    try:
        parse_address(address)
    except DaemonError as err:
        return err.message
    return None


def loopback_ip(host):
    """The loopback IP address to connect to for `host` (one of LOOPBACK_HOSTS); DaemonError when
    `localhost` does not resolve to loopback here (a hosts file pointing it elsewhere)."""
    if host != 'localhost':
        ip = ipaddress.ip_address(host)
        if not ip.is_loopback:
            raise DaemonError('DAEMON_ADDRESS_REFUSED', not_local_message(f'"{host}" is not this computer'))
        return host
    try:
        infos = socket.getaddrinfo('localhost', None, type=socket.SOCK_STREAM)
    except OSError:
        infos = []
    ips = [info[4][0] for info in infos if ipaddress.ip_address(info[4][0].split('%')[0]).is_loopback]
    if not ips:
        raise DaemonError('DAEMON_ADDRESS_REFUSED',
                          not_local_message('"localhost" does not resolve to a loopback address here'))
    return '127.0.0.1' if '127.0.0.1' in ips else ips[0]


def read_state(path):
    """The daemon's DaemonState dict; DaemonError DAEMON_NOT_RUNNING when the file is absent or unreadable."""
    try:
        with open(path, encoding='utf-8') as f:
            state = json.load(f)
    except FileNotFoundError:
        raise DaemonError('DAEMON_NOT_RUNNING', NOT_RUNNING + f' (no state file at {path})') from None
    except (OSError, ValueError) as err:
        raise DaemonError('DAEMON_NOT_RUNNING', NOT_RUNNING + f' (state file {path} unreadable: {err})') from None
    if not isinstance(state, dict) or not isinstance(state.get('port'), int) or not isinstance(state.get('token'), str):
        raise DaemonError('DAEMON_NOT_RUNNING', NOT_RUNNING + f' (state file {path} has no port and token)')
    return state


def error_message(status, body):
    """A readable message from the daemon's (or the service's) error body `{name, message, details}`."""
    if not isinstance(body, dict) or not isinstance(body.get('message'), str):
        return 'DAEMON_ERROR', f'The daemon answered HTTP {status} without an error message.', []
    name = body.get('name') if isinstance(body.get('name'), str) else 'DAEMON_ERROR'
    details = body.get('details') if isinstance(body.get('details'), list) else []
    parts = []
    for d in details[:5]:
        if isinstance(d, dict) and d.get('message'):
            where = '.'.join(str(p) for p in d.get('path') or [])
            parts.append(f'{where}: {d["message"]}' if where else str(d['message']))
    message = f'{name}: {body["message"]}'
    if parts:
        message += ' (' + '; '.join(parts) + ')'
    return name, message, details


class DaemonClient:
    """Calls the daemon. `address` (e.g. `http://127.0.0.1:47615`) overrides the state file's port;
    the token always comes from the state file, read again at every call (it changes at each start)."""

    def __init__(self, address='', state_path=None, connect_timeout=CONNECT_TIMEOUT, read_timeout=READ_TIMEOUT):
        self.address = address.strip()
        self.state_path = state_path or state_file_path()
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout

    def _target(self):
        # The address is checked before the state file (and its token) is even read.
        host, port = parse_address(self.address)
        ip = loopback_ip(host or '127.0.0.1')
        state = read_state(self.state_path)
        return ip, port or state['port'], state['token']

    def request(self, method, path, body=None, timeout=None):
        host, port, token = self._target()
        headers = {'Authorization': f'Bearer {token}', 'Accept': 'application/json'}
        data = None
        if body is not None:
            data = json.dumps(body).encode('utf-8')
            headers['Content-Type'] = 'application/json'
        conn = http.client.HTTPConnection(host, port, timeout=self.connect_timeout)
        try:
            try:
                conn.connect()
            except ConnectionRefusedError:
                raise DaemonError('DAEMON_NOT_RUNNING', NOT_RUNNING + f' (nothing answers on {host}:{port})') from None
            except (socket.timeout, OSError) as err:
                raise DaemonError('DAEMON_UNREACHABLE',
                                  f'Could not connect to the daemon at {host}:{port}: {err}') from None
            read_timeout = timeout or self.read_timeout
            conn.sock.settimeout(read_timeout)
            try:
                conn.request(method, path, body=data, headers=headers)
                res = conn.getresponse()
                raw = res.read()
            except socket.timeout:
                raise DaemonError('DAEMON_TIMEOUT',
                                  f'The daemon did not answer {method} {path} within {read_timeout:g} s: '
                                  'it may be busy; try again, or restart it with `renderbridge daemon`.') from None
            except (OSError, http.client.HTTPException) as err:
                raise DaemonError('DAEMON_UNREACHABLE',
                                  f'The connection to the daemon failed during {method} {path}: {err}') from None
        finally:
            conn.close()
        try:
            parsed = json.loads(raw.decode('utf-8')) if raw else None
        except ValueError:
            parsed = None
        if res.status >= 400:
            name, message, details = error_message(res.status, parsed)
            raise DaemonError(name, message, res.status, details)
        return parsed

    # One method per endpoint of DAEMON_ROUTES the add-on uses.
    def health(self):
        return self.request('GET', '/health')

    def start_pack(self, path, dependencies=None, addons=None):
        """Starts packing in the daemon's background (POST /packs, answered at once): poll get_pack."""
        body = {'path': path}
        if dependencies is not None:
            body['dependencies'] = dependencies
        if addons is not None:
            body['addons'] = addons
        return self.request('POST', '/packs', body)

    def get_pack(self, pack_id):
        """A background pack's state: phase and progress, then `ready` with its result or `failed` with its error."""
        return self.request('GET', '/packs/' + quote(pack_id, safe=''))

    def submit(self, pack_id, settings, mode='render', out_dir=None):
        body = {'packId': pack_id, 'settings': settings, 'mode': mode}
        if out_dir:
            body['outDir'] = out_dir
        return self.request('POST', '/submissions', body)

    def submit_job(self, job_id, settings, mode='render', out_dir=None):
        """Renders (or estimates) a job uploaded before, e.g. by an estimate: nothing is packed or sent again."""
        body = {'jobId': job_id, 'settings': settings, 'mode': mode}
        if out_dir:
            body['outDir'] = out_dir
        return self.request('POST', '/submissions', body)

    def cancel_estimate(self, job_id):
        """Stops the job's estimate while it samples; the job stays validated."""
        return self.request('DELETE', '/jobs/' + quote(job_id, safe='') + '/estimate')

    def submission(self, submission_id):
        return self.request('GET', '/submissions/' + quote(submission_id, safe=''))

    def jobs(self):
        return self.request('GET', '/jobs')['jobs']

    def job(self, job_id):
        return self.request('GET', '/jobs/' + quote(job_id, safe=''))

    def cancel(self, job_id):
        return self.request('POST', '/jobs/' + quote(job_id, safe='') + '/cancel')

    def approve_previews(self, job_id):
        """"Go" for the frames after the previews of a render submitted with the approval gate; the job."""
        return self.request('POST', '/jobs/' + quote(job_id, safe='') + '/approve-previews')

    def download(self, job_id, out_dir=None):
        body = {'outDir': out_dir} if out_dir else {}
        return self.request('POST', '/jobs/' + quote(job_id, safe='') + '/download', body)
