"""pykka actors around the core: manager, user and group trackers, config actor."""

from quotactor.actors.config import ConfigActor
from quotactor.actors.group_tracker import GroupTrackerActor
from quotactor.actors.manager import ManagerActor, ManagerClosed
from quotactor.actors.user_tracker import UserTrackerActor

__all__ = ["ConfigActor", "GroupTrackerActor", "ManagerActor", "ManagerClosed", "UserTrackerActor"]
