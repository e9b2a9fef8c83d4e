"""The leading + trailing throttle behind every live view (heta_nb._util.throttle)."""

from __future__ import annotations

from typing import Any

from heta_nb._util.throttle import Throttle


class FakeTime:
    """A clock moved by hand and a scheduler that keeps callbacks until fired."""

    def __init__(self) -> None:
        self.now = 0.0
        self.scheduled: list[tuple[float, Any]] = []

    def clock(self) -> float:
        return self.now

    def schedule(self, delay: float, callback: Any) -> None:
        self.scheduled.append((self.now + delay, callback))

    def advance(self, seconds: float) -> None:
        self.now += seconds
        due = [item for item in self.scheduled if item[0] <= self.now]
        self.scheduled = [item for item in self.scheduled if item[0] > self.now]
        for _, callback in due:
            callback()


def test_throttle_leading_trailing_and_forced() -> None:
    fake = FakeTime()
    flushes: list[float] = []
    throttle = Throttle(lambda: flushes.append(fake.now), min_interval=0.1, clock=fake.clock, schedule=fake.schedule)
    throttle.request()  # leading edge: immediate
    for _ in range(50):  # a burst inside one interval: one trailing flush, scheduled once
        fake.now += 0.001
        throttle.request()
    assert flushes == [0.0] and len(fake.scheduled) == 1
    fake.advance(0.2)
    assert len(flushes) == 2
    throttle.request(force=True)  # forced: immediate, even right after a flush
    assert len(flushes) == 3 and not fake.scheduled
