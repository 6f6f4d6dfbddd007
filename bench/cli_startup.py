"""CLI start-up, side by side in one run: `mpiscope --help`, `mpiscope runs`
on an empty output root, `import mpiscope` (the Python API, imported lazily)
and the bare interpreter (`python -c pass`).

Commands run in turns (one of each per round), each a fresh process, so
load on the machine hits all of them alike. Prints the median wall time of
each and its ratio to the bare interpreter (target: each command <= 3x).

    .venv/bin/python bench/cli_startup.py [--rounds 30]
"""

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def mpiscope_argv(via_module):
    """The installed console script beside this interpreter, as a user runs it
    (or `python -m mpiscope.cli`, e.g. for a checkout on PYTHONPATH)."""
    script = Path(sys.executable).with_name("mpiscope")
    if script.exists() and not via_module:
        return [str(script)]
    return [sys.executable, "-m", "mpiscope.cli"]


def wall(argv) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--via-module", action="store_true",
                    help="run python -m mpiscope.cli instead of the console script")
    args = ap.parse_args()
    empty = tempfile.mkdtemp(prefix="mpiscope-empty-root-")
    cmds = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "mpiscope --help": [*mpiscope_argv(args.via_module), "--help"],
        "mpiscope runs (empty root)": [*mpiscope_argv(args.via_module), "runs", "--out", empty],
        "python -c 'import mpiscope'": [sys.executable, "-c", "import mpiscope"],
    }
    times = {name: [] for name in cmds}
    for name, argv in cmds.items():  # warm the page cache once
        wall(argv)
    for _ in range(args.rounds):
        for name, argv in cmds.items():
            times[name].append(wall(argv))
    shutil.rmtree(empty)
    base = statistics.median(times["python -c pass"])
    print(f"{'command':28} {'median ms':>10} {'min ms':>8} {'ratio':>6}")
    for name, ts in times.items():
        med = statistics.median(ts)
        print(f"{name:28} {med * 1e3:10.1f} {min(ts) * 1e3:8.1f} {med / base:6.2f}")


if __name__ == "__main__":
    main()
