"""mpiscope's simulator beside LogGOPSim on the same GOAL files (one run each,
numbers side by side, not a timed test).

LogGOPSim (Hoefler et al., built by hand from its public source, never
committed) is given with --loggopsim PATH (its LogGOPSim binary) and
--txt2bin PATH (its GOAL text to binary converter; default: beside it).
Without them this prints "skipped" and exits 0.

Every schedule is written by our own generator (`mpiscope sim schedule
--format goal`), converted by txt2bin and simulated by both with the same
LogGOPS parameters. LogGOPSim takes integer nanoseconds (G and O in ns per
byte), so the parameter sets are integers. Printed per schedule and set:
both finish times and their difference, both event counts, event rates
(ours: simulation phase; LogGOPSim: its process CPU time, it reports whole
seconds only) and operations per second of CPU time of the whole process
(ours from GOAL text and from our binary form, LogGOPSim from the
binary file txt2bin made). The README's
simulator section says why finish times differ where they do.

    flock /tmp/mpiscope-heavy.lock .venv/bin/python bench/sim_vs_loggopsim.py \\
        --loggopsim /work/scratch/loggopsim/src/LogGOPSim/LogGOPSim [--small]
"""

import argparse
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from mpiscope.sim import binary  # noqa: E402

# (name, L, o, g, G, O, S) in ns and ns/B: LogGOPSim's integer units.
PARAMS = [
    ("G=0", 1500, 300, 200, 0, 0, 65535),
    ("G=1", 1500, 300, 200, 1, 0, 65535),
    ("g>o,G=1", 1500, 300, 1000, 1, 0, 65535),
]
# (bench, algo, p, size): eager messages, and a rendezvous one (size > S).
CASES = [
    ("allreduce", "recursive_doubling", 4096, 8),
    ("bcast", "binomial", 4096, 8),
    ("allgather", "ring", 256, 1024),
    ("bcast", "binomial", 64, 1 << 20),
]
SPEED = [("allreduce", "recursive_doubling", 1 << 16, 8), ("allgather", "ring", 1 << 10, 8)]


def child_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def ours(goal: Path, prm) -> dict:
    _, L, o, g, G, O, S = prm
    cpu0, t0 = child_cpu(), time.perf_counter()
    doc = binary.simulate(["--schedule", goal, "--L", L * 1e-9, "--o-s", o * 1e-9, "--o-r", o * 1e-9,
                           "--g", g * 1e-9, "--G", G * 1e-9, "--O", O * 1e-9, "--S", S])
    return {"finish_ns": doc["makespan_median_s"] * 1e9, "events": doc["events"], "rate": doc["events_per_s"],
            "ops": doc["nops"], "cpu": child_cpu() - cpu0, "wall": time.perf_counter() - t0}


def loggopsim(exe: Path, schedule_bin: Path, prm) -> dict:
    _, L, o, g, G, O, S = prm
    cpu0, t0 = child_cpu(), time.perf_counter()
    p = subprocess.run([exe, "-f", schedule_bin, "-L", str(L), "-o", str(o), "-g", str(g), "-G", str(G),
                        "-O", str(O), "-S", str(S), "-b"], capture_output=True, text=True)
    cpu, wall = child_cpu() - cpu0, time.perf_counter() - t0
    ev = re.search(r"Events:\s*(\d+)", p.stdout)
    fin = re.search(r"Maximum finishing time at host \d+: (\d+)", p.stdout)
    if p.returncode or not ev or not fin:
        raise SystemExit(f"LogGOPSim failed ({p.returncode}):\n{p.stdout[-2000:]}{p.stderr[-2000:]}")
    return {"finish_ns": float(fin.group(1)), "events": int(ev.group(1)), "rate": int(ev.group(1)) / cpu,
            "cpu": cpu, "wall": wall}


def convert(txt2bin: Path, goal: Path) -> Path:
    out = goal.with_suffix(".bin")
    p = subprocess.run([txt2bin, "-i", goal, "-o", out], capture_output=True, text=True)
    if p.returncode or not out.exists():
        raise SystemExit(f"txt2bin rejected {goal.name} ({p.returncode}):\n{p.stdout[-2000:]}{p.stderr[-2000:]}")
    return out


def goal_file(tmp: Path, bench, algo, p, size) -> Path:
    g = tmp / f"{bench}-{algo}-{p}-{size}.goal"
    binary.schedule(["--bench", bench, "--algo", algo, "-p", p, "--size", size, "--format", "goal", "-o", g])
    return g


def compare(loggopsim_path, txt2bin_path=None, small=False):
    exe = Path(loggopsim_path) if loggopsim_path else None
    t2b = Path(txt2bin_path) if txt2bin_path else (exe.parent / "txt2bin" if exe else None)
    if not exe or not exe.is_file() or not t2b or not t2b.is_file():
        print("LogGOPSim comparison: skipped (give --loggopsim PATH and, if not beside it, --txt2bin PATH)")
        return
    binary.ensure_built()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        print("finish times (ns), same GOAL file, same L, o, g, G, O, S (ns, ns/B):")
        print(f"{'schedule':36s} {'params':8s} {'ours':>12s} {'LogGOPSim':>12s} {'ours-LGS':>9s}"
              f" {'events ours':>11s} {'LGS':>9s}")
        for case in CASES:
            goal = goal_file(tmp, *case)
            sbin = convert(t2b, goal)
            for prm in PARAMS:
                u, v = ours(goal, prm), loggopsim(exe, sbin, prm)
                name = f"{case[0]}/{case[1]} p={case[2]} {case[3]}B"
                print(f"{name:36s} {prm[0]:8s} {u['finish_ns']:12.1f} {v['finish_ns']:12.1f}"
                      f" {u['finish_ns'] - v['finish_ns']:9.1f} {u['events']:11d} {v['events']:9d}")
        print("speed (one core; events are counted differently: ours ~5 per send/recv pair with its"
              " reduction, LogGOPSim 1 per operation + 1 per message):")
        for bench, algo, p, size in SPEED:
            if small:
                p = min(p, 1 << 12)
            goal = goal_file(tmp, bench, algo, p, size)
            t0 = time.perf_counter()
            sbin = convert(t2b, goal)
            conv = time.perf_counter() - t0
            prm = PARAMS[0]
            ours_bin = goal.with_suffix(".gbin")
            binary.schedule(["--bench", bench, "--algo", algo, "-p", p, "--size", size, "--format", "bin",
                             "-o", ours_bin])
            u, w, v = ours(goal, prm), ours(ours_bin, prm), loggopsim(exe, sbin, prm)
            same = "same finish" if u["finish_ns"] == v["finish_ns"] else f"finish differs by {u['finish_ns'] - v['finish_ns']:.1f} ns"
            print(f"{bench}/{algo} p={p} ({u['ops']} operations, {same}; txt2bin {conv:.1f} s):")
            print(f"    ours       {u['events']:>10d} events {u['rate'] / 1e6:7.2f} M events/s (simulation)"
                  f"  {u['ops'] / u['cpu'] / 1e6:6.2f} M ops/s of process CPU ({u['cpu']:.2f} s, wall {u['wall']:.2f} s)")
            print(f"    ours, bin  {w['events']:>10d} events {w['rate'] / 1e6:7.2f} M events/s (simulation)"
                  f"  {w['ops'] / w['cpu'] / 1e6:6.2f} M ops/s of process CPU ({w['cpu']:.2f} s, wall {w['wall']:.2f} s)"
                  " (our binary schedule form)")
            print(f"    LogGOPSim  {v['events']:>10d} events {v['rate'] / 1e6:7.2f} M events/s (process CPU)"
                  f"  {u['ops'] / v['cpu'] / 1e6:6.2f} M ops/s of process CPU ({v['cpu']:.2f} s, wall {v['wall']:.2f} s)")
            print(f"    LogGOPSim process CPU / ours: {v['cpu'] / u['cpu']:.1f}x (GOAL text),"
                  f" {v['cpu'] / w['cpu']:.1f}x (binary forms)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--loggopsim", metavar="PATH", help="LogGOPSim's binary, built by hand")
    ap.add_argument("--txt2bin", metavar="PATH", help="LogGOPSim's txt2bin (default: beside --loggopsim)")
    ap.add_argument("--small", action="store_true", help="speed runs at 2^12 ranks only")
    a = ap.parse_args()
    compare(a.loggopsim, a.txt2bin, a.small)


if __name__ == "__main__":
    main()
