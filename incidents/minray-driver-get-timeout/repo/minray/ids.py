"""Identifiers for tasks, objects and nodes."""

import itertools
import os
import threading
from dataclasses import dataclass

_counter = itertools.count(1)
_counter_lock = threading.Lock()


def _next_seq():
    with _counter_lock:
        return next(_counter)


@dataclass(frozen=True, order=True)
class NodeID:
    value: str

    @classmethod
    def random(cls):
        return cls(os.urandom(4).hex())

    def __str__(self):
        return self.value


@dataclass(frozen=True, order=True)
class TaskID:
    job: int
    seq: int

    @classmethod
    def for_job(cls, job):
        return cls(job, _next_seq())

    def __str__(self):
        return "t-%02x-%06x" % (self.job, self.seq)


@dataclass(frozen=True, order=True)
class ObjectID:
    task: TaskID
    index: int

    @classmethod
    def for_return(cls, task_id, index=0):
        return cls(task_id, index)

    def __str__(self):
        return "o-%02x-%06x-%d" % (self.task.job, self.task.seq, self.index)


@dataclass(frozen=True)
class ObjectRef:
    """A handle on a (possibly not yet computed) task result."""

    object_id: ObjectID
    owner: NodeID

    def __str__(self):
        return "ObjectRef(%s@%s)" % (self.object_id, self.owner)
