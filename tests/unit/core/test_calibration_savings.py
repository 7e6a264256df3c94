"""The calibration's per-message savings (a Fenwick tree) against the plain sum they replace."""

import random

from ctxview.core.requests.points import _Savings


def test_savings_from_a_message_on_are_the_sum_of_the_latest_saving_of_each():
    rng = random.Random(7)
    n = 97
    savings = _Savings(n)
    plain: dict[int, int] = {}
    for _ in range(400):
        k, saved = rng.randrange(-2, n + 2), rng.randrange(-50, 500)
        savings.set(k, saved)
        if 0 <= k < n:
            plain[k] = saved  # a message saved again: its new saving replaces the old
        s0 = rng.randrange(0, n)
        assert savings.from_(s0) == sum(v for m, v in plain.items() if m >= s0)
    assert savings.from_(0) == sum(plain.values())
