# SPDX-License-Identifier: BSD-3-Clause
"""The change points Apache Otava and asv find, each with its defaults, in
series read as JSON from stdin ([[median, ...], ...]); prints
{"Otava": [[index, ...], ...], "asv": [...]} (the index of the first value
after each change). Run by bench/history_detection.py in a Python that has
apache-otava and asv, which cannot share mpiscope's environment (Otava pins
its own NumPy and SciPy); a detector that is not installed is left out."""

import argparse
import json
import sys


def otava(series):
    from otava.analysis import compute_change_points   # E-divisive means, Fleming et al. (2023)

    return [[int(c.index) for c in compute_change_points(list(s))[0]] for s in series]


def asv(series):
    from asv.step_detect import detect_steps   # piecewise-constant fit of airspeed velocity

    return [[int(step[0]) for step in detect_steps(list(s))[1:]] for s in series]


def main():
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()
    series = json.load(sys.stdin)
    found = {}
    for name, detect in (("Otava", otava), ("asv", asv)):
        try:
            found[name] = detect(series)
        except ImportError:
            continue
    json.dump(found, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
