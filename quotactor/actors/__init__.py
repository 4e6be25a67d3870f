"""The actors around the core: the manager, the user and group trackers and the config actor,
all on the runtime of `quotactor.actors.runtime` (as are the elastic-quota and quota-tree
actors, through `quotactor.actors.served`)."""

from quotactor.actors.config import ConfigActor
from quotactor.actors.group_tracker import GroupTrackerActor
from quotactor.actors.manager import ManagerActor
from quotactor.actors.user_tracker import UserTrackerActor

__all__ = ["ConfigActor", "GroupTrackerActor", "ManagerActor", "UserTrackerActor"]
