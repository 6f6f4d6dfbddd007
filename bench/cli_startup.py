# SPDX-License-Identifier: BSD-3-Clause
"""How long the command line takes to start, side by side in one run:
`mpiscope --help`, `mpiscope runs` on an empty output root and on a root
holding one run, `mpiscope show` of that run, `import mpiscope` (the Python
API, whose modules are imported lazily) and the bare interpreter
(`python -c pass`). The run is the test suite's demo run (tests/rawgen.py:
13 series on 4 ranks), written and ingested first, with show's rows kept
in it as `mpiscope run` keeps them (views/show_cache.py); the commands start
once its files are older than the catalog's racy window (dir_stamps.RACY_S), so
the first listing keeps the listing beside the catalog (store/listing.py),
as it does for any run stored a moment earlier.

Each command runs once to warm the page cache, then --rounds times in turns
(one of each per round), each time as a fresh process, so that other work on
the machine slows all of them alike. No MPI is started.

The table gives, per command, the median and the least wall time over the
rounds in milliseconds and the ratio of its median to the bare
interpreter's. Target: every command <= 3x the bare interpreter.

To reproduce (a few seconds with the default 30 rounds):

    .venv/bin/python bench/cli_startup.py --rounds 30 --json cli-startup.json
"""

import compileall
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from rawgen import build_demo_run  # noqa: E402

import benchjson  # noqa: E402

import mpiscope as package  # noqa: E402
from mpiscope.store import dir_stamps  # noqa: E402
from mpiscope.views import show_cache  # noqa: E402


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
    ap = benchjson.parser(__doc__)
    ap.add_argument("--rounds", type=int, default=30,
                    help="timed runs of each command, in turns (default %(default)s)")
    ap.add_argument("--via-module", action="store_true",
                    help="run `python -m mpiscope.cli` instead of the console script "
                         "(e.g. for a checkout on PYTHONPATH)")
    args = benchjson.parse(ap)
    if args.rounds < 1:
        ap.error(f"--rounds must be at least 1, got {args.rounds}")
    empty = tempfile.mkdtemp(prefix="mpiscope-empty-root-")
    one = tempfile.mkdtemp(prefix="mpiscope-one-run-")
    # Bytecode compiled, as an installed package has it (a checkout run with
    # PYTHONDONTWRITEBYTECODE would otherwise compile its changed modules at every start).
    compileall.compile_dir(str(Path(package.__file__).parent), quiet=1)
    run_dir = build_demo_run(one)[0]
    show_cache.keep(run_dir, show_cache.computed(run_dir).rows)
    time.sleep(dir_stamps.RACY_S)
    mpiscope = mpiscope_argv(args.via_module)
    cmds = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "mpiscope --help": [*mpiscope, "--help"],
        "mpiscope runs (empty root)": [*mpiscope, "runs", "--out", empty],
        "mpiscope runs (one run)": [*mpiscope, "runs", "--out", one],
        "mpiscope show (one run)": [*mpiscope, "show", "--out", one],
        "python -c 'import mpiscope'": [sys.executable, "-c", "import mpiscope"],
    }
    times = {name: [] for name in cmds}
    for name, argv in cmds.items():  # warm the page cache once
        wall(argv)
    for _ in range(args.rounds):
        for name, argv in cmds.items():
            times[name].append(wall(argv))
    shutil.rmtree(empty)
    shutil.rmtree(one)
    base = statistics.median(times["python -c pass"])
    rows = [[name, round(statistics.median(ts) * 1e3, 2), round(min(ts) * 1e3, 2),
             round(statistics.median(ts) / base, 3)] for name, ts in times.items()]
    t = benchjson.show(f"CLI start-up, {args.rounds} rounds",
                       ["command", "median ms", "min ms", "median / python -c pass"], rows,
                       ["target: every command <= 3x the bare interpreter"])
    benchjson.write(args, "cli_startup", [t], {"wall_s": times})


if __name__ == "__main__":
    main()
