# SPDX-License-Identifier: BSD-3-Clause
"""Adaptive message sizes, as mpptest and SKaMPI choose them: where the
measured curve departs from the straight line through a size's neighbours,
the intervals around that size get a size of their own."""


def _gaps(sizes, medians):
    """(relative departure from the neighbours' line, left size, size, right size)
    for every interior size, sizes ascending."""
    for i in range(1, len(sizes) - 1):
        s0, s1, s2 = sizes[i - 1 : i + 2]
        m0, m1, m2 = medians[i - 1 : i + 2]
        if m1 > 0:
            expected = m0 + (m2 - m0) * (s1 - s0) / (s2 - s0)
            yield abs(m1 - expected) / m1, s0, s1, s2


def departures(sizes, medians, threshold):
    """Interior sizes whose median differs from the linear interpolation of
    its two neighbours by more than `threshold` (relative to the median)."""
    return [s1 for gap, _, s1, _ in _gaps(sizes, medians) if gap > threshold]


def propose_sizes(sizes, medians, threshold, budget):
    """New sizes (at most `budget`, sorted) halving the intervals next to every
    departing size, largest departures first."""
    pairs = sorted(zip(sizes, medians))
    sizes, medians = [s for s, _ in pairs], [m for _, m in pairs]
    existing, new = set(sizes), []
    for gap, s0, s1, s2 in sorted(_gaps(sizes, medians), reverse=True):
        if gap <= threshold:
            break
        for mid in ((s0 + s1) // 2, (s1 + s2) // 2):
            if mid not in existing and len(new) < budget:
                existing.add(mid)
                new.append(mid)
    return sorted(new)
