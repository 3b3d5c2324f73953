"""Clock sources.

``wall()`` is seconds since the epoch and may jump when the host clock is
stepped; ``monotonic()`` never goes backwards but has an arbitrary origin and is
only meaningful within one process.
"""

import time


class SystemClock:
    def wall(self):
        return time.time()

    def monotonic(self):
        return time.monotonic()

    def sleep(self, seconds):
        time.sleep(seconds)


class OffsetClock(SystemClock):
    """A system clock whose wall time is shifted, used to model host skew in tests."""

    def __init__(self, offset_s):
        self.offset_s = offset_s

    def wall(self):
        return time.time() + self.offset_s


DEFAULT_CLOCK = SystemClock()
