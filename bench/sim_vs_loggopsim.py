# SPDX-License-Identifier: BSD-3-Clause
"""mpiscope's simulator beside LogGOPSim on the same GOAL files (one run
each, numbers side by side, not a timed test). No MPI is started.

LogGOPSim (Hoefler et al. (2010), built from its public source) is given with
--loggopsim PATH (its LogGOPSim binary) and --txt2bin PATH (its GOAL text to
binary converter; default: beside it). Without them this prints "skipped"
and exits 0.

Every schedule is written by our own generator (`mpiscope sim schedule
--format goal`), converted by txt2bin and simulated by both with the same
LogGOPS parameters. LogGOPSim takes integer nanoseconds (G and O in ns per
byte), so the parameter sets are integers.

The first table gives per schedule and parameter set both finish times (ns),
their difference and both event counts. The second, for two larger
schedules, per simulator and input form: events, event rate (ours: the
simulation phase; LogGOPSim: its process CPU time, as it reports whole
seconds only) and operations per second of the whole process's CPU time
(ours from GOAL text and from our binary form, LogGOPSim from the binary
file txt2bin made). The third, per larger schedule, the time txt2bin took
and LogGOPSim's process CPU time over ours. Events are counted differently:
ours about 5 per send/receive pair with its reduction, LogGOPSim 1 per
operation and 1 per message. The simulator's documentation says why finish
times differ where they do.

To reproduce (a few minutes; --small about a minute):

    .venv/bin/python bench/sim_vs_loggopsim.py --loggopsim PATH/LogGOPSim --json sim-vs-loggopsim.json
"""

import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from mpiscope.sim import binary  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchjson  # noqa: E402

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
    """Both simulators on the same schedules: (the tables printed, the numbers);
    no tables when LogGOPSim was not given."""
    exe = Path(loggopsim_path) if loggopsim_path else None
    t2b = Path(txt2bin_path) if txt2bin_path else (exe.parent / "txt2bin" if exe else None)
    if not exe or not exe.is_file():
        return [], {"skipped": benchjson.skipped("LogGOPSim", "--loggopsim")}
    if not t2b or not t2b.is_file():
        return [], {"skipped": benchjson.skipped("LogGOPSim's txt2bin", "--txt2bin")}
    binary.ensure_built()
    finish, speed, cpu = [], [], []
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for case in CASES:
            goal = goal_file(tmp, *case)
            sbin = convert(t2b, goal)
            for prm in PARAMS:
                u, v = ours(goal, prm), loggopsim(exe, sbin, prm)
                finish.append([f"{case[0]}/{case[1]} p={case[2]} {case[3]} B", prm[0], u["finish_ns"],
                               v["finish_ns"], u["finish_ns"] - v["finish_ns"], u["events"], v["events"]])
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
            name = f"{bench}/{algo} p={p}"
            for who, x, rate_of in (("ours, GOAL text", u, "simulation"), ("ours, our binary form", w, "simulation"),
                                    ("LogGOPSim, txt2bin's binary", v, "process CPU")):
                speed.append([name, u["ops"], who, x["events"], x["rate"] / 1e6, rate_of,
                              u["ops"] / x["cpu"] / 1e6, x["cpu"], x["wall"]])
            cpu.append([name, u["ops"], conv, u["finish_ns"] - v["finish_ns"], v["cpu"] / u["cpu"],
                        v["cpu"] / w["cpu"]])
    params = "; ".join(f"{n}: L {L}, o {o}, g {g}, G {G}, O {O}, S {S}" for n, L, o, g, G, O, S in PARAMS)
    tables = [
        benchjson.show("finish times, same GOAL file, same L, o, g, G, O, S (ns, ns/B)",
                       ["schedule", "parameters", "ours ns", "LogGOPSim ns", "ours - LogGOPSim ns",
                        "events ours", "events LogGOPSim"], finish, [f"parameters: {params}"]),
        benchjson.show("speed on one core", ["schedule", "operations", "simulator, input", "events",
                                             "M events/s", "events/s of", "M operations/s of process CPU",
                                             "process CPU s", "wall s"], speed,
                       ["events are counted differently: ours about 5 per send/receive pair with its "
                        "reduction, LogGOPSim 1 per operation and 1 per message"]),
        benchjson.show("LogGOPSim's process CPU time over ours", ["schedule", "operations", "txt2bin s",
                                                                  "finish ours - LogGOPSim ns",
                                                                  "CPU ratio, GOAL text",
                                                                  "CPU ratio, binary forms"], cpu)]
    return tables, {t["title"]: benchjson.records(t) for t in tables}


def main():
    ap = benchjson.parser(__doc__)
    ap.add_argument("--loggopsim", metavar="PATH", help="LogGOPSim's binary, built from its public source")
    ap.add_argument("--txt2bin", metavar="PATH", help="LogGOPSim's txt2bin (default: beside --loggopsim)")
    ap.add_argument("--small", action="store_true", help="speed runs at 2^12 ranks at most")
    a = benchjson.parse(ap)
    tables, results = compare(a.loggopsim, a.txt2bin, a.small)
    benchjson.write(a, "sim_vs_loggopsim", tables, results)


if __name__ == "__main__":
    main()
