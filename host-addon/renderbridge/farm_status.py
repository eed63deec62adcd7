# Which farm the daemon uses and whether it answers, for the preferences and the panel. No bpy:
# test_connection() runs on the worker thread and returns plain text for the main thread. The farm
# and profile come from the daemon's GET /health (they follow config.toml); the probe is a real
# round trip to the farm through the daemon: GET /jobs/<random id> is answered JOB_NOT_FOUND by a
# farm that accepted the key, UNAUTHORIZED by one that refused it, and SERVICE_UNREACHABLE by the
# daemon when nothing answers at that URL. The key itself never reaches the add-on.
import uuid

try:
    from .daemon_client import DaemonError
except ImportError:  # loaded on its own by the python unit tests (test/host-addon/), outside the package
    from daemon_client import DaemonError


def farm_of(health):
    """The service URL and profile the daemon uses, e.g. `http://farm:8420/api/external/v1 (profile "studio")`."""
    if not health:
        return ''
    return f"{health.get('serviceUrl', '?')} (profile \"{health.get('profile', 'default')}\")"


def current_farm(client):
    """farm_of() the daemon's health now, '' when it cannot be read (the caller's own call already succeeded)."""
    try:
        return farm_of(client.health())
    except DaemonError:
        return ''


def test_connection(client, probe_id=None):
    """{'ok', 'message', 'farm', 'profile'}: the daemon asks its farm with its key. Raises DaemonError
    only when the daemon itself cannot be reached (the caller shows that message as it is)."""
    health = client.health()
    farm, profile = health.get('serviceUrl', ''), health.get('profile', 'default')
    out = {'ok': False, 'farm': farm, 'profile': profile}
    if not health.get('apiKeyConfigured'):
        out['message'] = (f'The daemon uses {farm_of(health)} but has no API key for it: log in with '
                          f'`renderbridge login --profile {profile}` or in the tray app\'s Settings.')
        return out
    try:
        client.job(probe_id or str(uuid.uuid4()))
    except DaemonError as err:
        if err.name != 'JOB_NOT_FOUND':
            out['message'] = _problem(err, farm, profile)
            return out
    out['ok'] = True
    out['message'] = f'{farm} answered: the farm accepts the API key of profile "{profile}".'
    return out


def _problem(err, farm, profile):
    if err.status == 401 or err.name == 'UNAUTHORIZED':
        return (f'{farm} refused the API key of profile "{profile}": log in again with '
                f'`renderbridge login --profile {profile}` or in the tray app\'s Settings.')
    if err.name == 'SERVICE_UNREACHABLE':
        return (f'{farm} did not answer the daemon: check the service URL of profile "{profile}" '
                '(`renderbridge config set serviceUrl URL` or the tray app\'s Settings) and the network.')
    return f'{farm} could not be checked: {err}'
