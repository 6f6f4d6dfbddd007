# SPDX-License-Identifier: BSD-3-Clause
"""A number with its uncertainty: every estimate mpiscope reports is one."""

import dataclasses
import math


@dataclasses.dataclass(frozen=True)
class Estimate:
    point: float
    stderr: float  # NaN where no standard error is defined
    level: float  # confidence level of [low, high], e.g. 0.95
    low: float
    high: float
    method: str  # how the interval was made, e.g. "bootstrap-percentile", "order-statistics"

    def contains(self, value):
        return self.low <= value <= self.high

    def relative_halfwidth(self):
        """Half the interval's width over the point (inf when the point is 0)."""
        if not self.point:
            return math.inf
        return 0.5 * (self.high - self.low) / abs(self.point)

    def scaled(self, factor):
        """The same estimate in other units (factor > 0)."""
        return dataclasses.replace(
            self, point=self.point * factor, stderr=self.stderr * factor, low=self.low * factor, high=self.high * factor
        )

    def to_dict(self):
        return dataclasses.asdict(self)
