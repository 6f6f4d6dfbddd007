# SPDX-License-Identifier: BSD-3-Clause
"""Test helper: a number read from OSU-style text (`export --format osu`) as
a ReFrame test reads it, with its sanity patterns."""

import reframe.utility.sanity as sn


def reframe_value(path, size):
    """The value on the line of `size` in the file at `path`."""
    assert sn.evaluate(sn.assert_found(rf'^{size}', str(path)))
    return sn.evaluate(sn.extractsingle(rf'^{size}\s+(\S+)', str(path), 1, float))
