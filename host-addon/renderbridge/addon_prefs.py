# Reading this add-on's preferences, apart from the class that draws them (preferences.py): the
# session reads the daemon address here, while the preferences draw the session's farm box, so
# the two must not import each other.
import bpy

from . import daemon_client


def get(context=None):
    """This add-on's preferences."""
    context = context or bpy.context
    return context.preferences.addons[__package__].preferences


def address_problem(context=None):
    """Why the daemon address preference is refused (not loopback), None when it is fine."""
    return daemon_client.check_address(get(context).daemon_address)
