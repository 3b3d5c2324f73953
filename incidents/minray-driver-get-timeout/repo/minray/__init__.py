"""minray: a small distributed task runtime.

A cluster is made of nodes. Every node runs a local scheduler (the "raylet"),
an object store and a pool of worker processes (threads here). A driver
submits tasks through :class:`minray.client.Client`; task results are stored
as immutable objects and referenced by :class:`minray.ids.ObjectRef`.
"""

from minray.client import Client, GetTimeoutError
from minray.ids import ObjectRef, TaskID, ObjectID

__all__ = ["Client", "GetTimeoutError", "ObjectRef", "TaskID", "ObjectID"]
__version__ = "0.7.2"
