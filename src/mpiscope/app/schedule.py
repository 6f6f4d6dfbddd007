# SPDX-License-Identifier: BSD-3-Clause
"""The order of an application's launches and when to stop launching (pure, no I/O).

Launches are interleaved in rounds (A B C, A B C, ...), so that a slow drift of
the machine weighs on every configuration alike; `warmup` rounds are not counted.
From `min_rounds` on, after each round, measuring stops when every speedup has a
verdict and a 95% interval within `ci_width` (stats/speedup.py narrow_enough),
after `max_rounds`, when another round of the mean length would end beyond
`time_budget` s, or when the baseline, or every other configuration, has no
valid launch. A configuration with no valid launch after `min_rounds` is not
launched again: its launches are recorded, and it has no speedup."""

from __future__ import annotations

from dataclasses import dataclass

from mpiscope.common.errors import UsageError
from mpiscope.stats.speedup import narrow_enough

CI_REACHED = "ci-width"
MAX_ROUNDS = "max-rounds"
TIME_BUDGET = "time-budget"
NO_BASELINE = "no-valid-baseline"
NO_OTHER = "no-valid-config"
INTERRUPTED = "interrupted"
STOPS = {
    CI_REACHED: "every speedup's 95% interval is within ±{ci_width:g} of it",
    MAX_ROUNDS: "--max-rounds {max_rounds} rounds were done",
    TIME_BUDGET: "another round would pass the --time-budget of {time_budget:g} s",
    NO_BASELINE: "the default had no valid launch in {min_rounds} rounds",
    NO_OTHER: "no configuration but the default had a valid launch in {min_rounds} rounds",
    INTERRUPTED: "interrupted",
}


@dataclass(frozen=True)
class StopRule:
    ci_width: float = 0.02
    time_budget: float = 600.0
    min_rounds: int = 3
    max_rounds: int = 50
    warmup: int = 1

    def check(self) -> StopRule:
        """Refuses values that cannot stop or cannot start (UsageError)."""
        if not self.ci_width > 0:
            raise UsageError(
                f"--ci-width must be above 0 (got {self.ci_width:g}); e.g. 0.02 stops "
                f"when every speedup is known within ±2%"
            )
        if not self.time_budget > 0:
            raise UsageError(f"--time-budget must be above 0 seconds (got {self.time_budget:g})")
        if self.min_rounds < 1:
            raise UsageError(f"--min-rounds must be at least 1 (got {self.min_rounds})")
        if self.max_rounds < self.min_rounds:
            raise UsageError(f"--max-rounds {self.max_rounds} is below --min-rounds {self.min_rounds}")
        if self.warmup < 0:
            raise UsageError(f"--warmup must be 0 or more rounds (got {self.warmup})")
        return self

    def describe(self, stop: str) -> str:
        return describe_stop(stop, vars(self))


def describe_stop(stop: str | None, options: dict) -> str:
    """Why measuring stopped, in words; `options`: the rule's values (an app run's options)."""
    return STOPS[stop].format(**options) if stop in STOPS else "before the end (mpiscope was stopped)"


def active(names, baseline: str, rounds_done: int, rule: StopRule, valid: dict) -> list:
    """The configurations the next round launches, in order: all of them
    before `min_rounds`; after, those with a valid launch (`valid`: name ->
    valid launches so far)."""
    if rounds_done < rule.min_rounds:
        return list(names)
    return [n for n in names if valid.get(n, 0) > 0 or n == baseline]


def decide(
    rule: StopRule, rounds_done: int, elapsed_s: float, round_s: list, results: list, baseline: str
) -> str | None:
    """None: launch another round; else why measuring stops. `round_s`: the
    counted rounds' durations; `results`: stats/speedup.py's Speedups now."""
    if rounds_done < rule.min_rounds:
        return None
    by_name = {r.config: r for r in results}
    if by_name[baseline].n == 0:
        return NO_BASELINE
    if all(r.n == 0 for r in results if r.config != baseline):
        return NO_OTHER
    if narrow_enough([r for r in results if r.n > 0], rule.ci_width):
        return CI_REACHED
    if rounds_done >= rule.max_rounds:
        return MAX_ROUNDS
    if round_s and elapsed_s + sum(round_s) / len(round_s) > rule.time_budget:
        return TIME_BUDGET
    return None
