"""The actors around the core: the manager and the user and group trackers (on the runtime of
`quotactor.actors.runtime`), and the config actor (a pykka actor)."""

from quotactor.actors.config import ConfigActor
from quotactor.actors.group_tracker import GroupTrackerActor
from quotactor.actors.manager import ManagerActor
from quotactor.actors.user_tracker import UserTrackerActor

__all__ = ["ConfigActor", "GroupTrackerActor", "ManagerActor", "UserTrackerActor"]
