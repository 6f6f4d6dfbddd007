"""Simulated against measured on an emulated cluster, at Fast Ethernet and at
GigE: every algorithm of allgather, allreduce and bcast at three sizes,
measured on the cluster, then simulated with costs from the point-to-point
benchmarks measured on the same cluster just before (`mpiscope sim check
--from-run`), by two models side by side: `drawn`, per-message one-way
times drawn from their distributions at 256 B–256 KiB (the sizes the
algorithms' messages have; 20 replicates), and `shaped`, a link whose rate
and token bucket are fitted to pingpong (`--shaped-link`: an idle link lets
a burst through, a busy one only its rate, as the cluster's tbf does). With
--skew, each rank's start is drawn from the collectives' measured lateness.
Prints the table with the cause of every cell that misses 15% (the measured
median unsure by more than 15%, simulated high, simulated low), the share of
cells within 15% (goal >= 90%), Kendall τ of the algorithms' order per
collective and size (goal >= 0.8), how fast the emulated link carried
256 KiB against its nominal rate, alone (pingpong) and with every host
sending at once (ring), and where the machine's CPU time went
while measuring (user, system, softirq, idle; of all cores), with the load
average before: on a 2-core machine the ranks and the links' emulation share
the cores. Needs root; about a minute per preset and 4 hosts.

    flock /tmp/mpiscope-heavy.lock .venv/bin/python bench/sim_validate.py [--hosts 4] [--presets gige]
        [--p2p pingpong|ring] [--models drawn,shaped] [--skew] [--keep DIR]
    .venv/bin/python bench/sim_validate.py --again DIR [--p2p ...] [--skew]   (simulate kept runs again)
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import mpiscope as mpiscope_api

SIZES = "1K,16K,64K"
P2P_SIZES = "256-256K:x2"  # every message size the algorithms send at SIZES on 4-8 ranks
COLLS = "allgather,allreduce,bcast"
STAT_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")


def mpiscope(*args, check=True):
    p = subprocess.run([sys.executable, "-m", "mpiscope.cli", *map(str, args)], capture_output=True, text=True)
    if check and p.returncode != 0:
        sys.exit(f"mpiscope {' '.join(map(str, args))} failed:\n{p.stderr[-3000:]}")
    return p


def cpu_ticks():
    return [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]


def cpu_shares(before, after):
    d = [b - a for a, b in zip(before, after)]
    return {k: v / max(1, sum(d)) for k, v in zip(STAT_FIELDS, d)}


def networks(text):
    """--presets: names split at ',', or, once a link spec is among them, networks split at ';'."""
    return [n for n in text.split(";" if ";" in text or "=" in text else ",") if n.strip()]


def tag(network):
    """A preset's name, or a link spec (rate=10mbit) made fit for run labels (rate-10mbit)."""
    return re.sub(r"[^A-Za-z0-9]+", "-", network)


def measure(network, hosts, out, reps_max):
    """Point-to-point run, then the collectives' run, on one cluster; CPU shares while they ran."""
    name = f"val{os.getpid() % 10000}"
    link = ["--link", network] if "=" in network else ["--preset", network]
    mpiscope("cluster", "up", name, "--hosts", hosts, *link)
    preset = tag(network)
    load = os.getloadavg()[0]
    t0 = cpu_ticks()
    try:
        common = ["--cluster", name, "-n", hosts, "--reps-min", 5, "--reps-max", reps_max, "--time-budget", 2,
                  "--out", out]
        mpiscope("run", *common, "--bench", "pingpong,ring", "--sizes", P2P_SIZES, "--label", f"p2p-{preset}")
        mpiscope("run", *common, "--bench", COLLS, "--algo", "all", "--sizes", SIZES,
                 "--label", f"validate-{preset}")
    finally:
        mpiscope("cluster", "down", name, check=False)
    cpu = cpu_shares(t0, cpu_ticks())
    (Path(out) / f"cpu-{preset}.json").write_text(json.dumps({"load_before": load, "shares": cpu}))


# Open MPI 4.1's TCP BTL: eager limit 64 KiB including the ob1 match header. A larger message
# goes by rendezvous with no data: the TCP BTL can put but not get, so ob1 sends a bare request
# and the data after the receiver's answer (pml_ob1_sendreq.c, mca_pml_ob1_send_request_start_rdma).
OMPI_TCP_EAGER = 65536 - 16


def link_fidelity(out, preset):
    """How fast the emulated link carried the largest messages, against the TCP payload rate its
    line rate gives: alone (pingpong) and with every host sending at once (ring: each host's link
    carries one message each way, so a faithful emulation is as fast as pingpong). Where the
    cores the ranks and the links share run out, ring falls behind and no point-to-point cost fits
    a collective whose ranks all send at once."""
    run = mpiscope_api.load_run(f"p2p-{preset}", out=out)
    nominal = run.context["cluster"]["link"]["payload_rate_Bps"]
    df = run.samples()
    df = df[df.valid]
    size = int(df["size"].max())
    rates = {b: size / df[(df.bench == b) & (df["size"] == size)].value.median() for b in ("pingpong", "ring")}
    return (f"link at {size // 1024} KiB against its {nominal / 1e6:.1f} MB/s of TCP payload: one message at a time "
            f"(pingpong) {rates['pingpong'] / 1e6:.1f} MB/s ({rates['pingpong'] / nominal:.2f}x), every host "
            f"sending at once (ring) {rates['ring'] / 1e6:.1f} MB/s ({rates['ring'] / nominal:.2f}x)")


def simulate(preset, model, p2p, skew, fair, out):
    model_args = ["--sample", "--replicates", 20] if model == "drawn" else ["--shaped-link"]
    args = ["sim", "check", f"validate-{preset}", "--from-run", f"p2p-{preset}", "--p2p", p2p, *model_args,
            "--json", "--out", out, "--eager", OMPI_TCP_EAGER] \
        + (["--skew-from-run"] if skew else []) \
        + (["--fair"] if fair else [])
    doc = json.loads(mpiscope(*args).stdout)
    rows = doc["rows"]
    what = (f"times drawn from p2p-{preset}'s {p2p}" if model == "drawn" else
            f"a shaped link fitted to p2p-{preset}'s pingpong (burst {doc['costs']['burst']:.0f} B, "
            f"{1e-6 / doc['costs']['G']:.1f} MB/s), latency of its {p2p} ({doc['costs']['L'] * 1e6:.1f} us)")
    print(f"\n{preset}, {doc['p']} hosts (run {doc['run_id']}), model {model}: {what}"
          + (", starts from the measured lateness" if skew else "")
          + (", send channels shared fairly" if fair else ", sends one after the other, Open MPI's rendezvous")
          + ":")
    print(f"{'bench':10s} {'algorithm':38s} {'size':>6s} {'measured us':>12s} {'95% CI':>19s} "
          f"{'simulated us':>13s} {'error':>8s}  cause")
    for r in rows:
        lo, hi = r["measured_ci_s"]
        print(f"{r['bench']:10s} {r['algo']:38s} {r['size']:6d} {r['measured_s'] * 1e6:12.1f} "
              f"[{lo * 1e6:8.1f},{hi * 1e6:8.1f}] {r['simulated_s'] * 1e6:13.1f} {100 * r['rel_error']:+7.1f}%  "
              f"{r['cause'] or ''}")
    causes = {}
    for r in rows:
        if r["cause"]:
            causes[r["cause"]] = causes.get(r["cause"], 0) + 1
    print(f"within 15%: {100 * doc['within_15pct']:.0f}% of {len(rows)} cells (goal >= 90%); missed: "
          + (", ".join(f"{k} {v}" for k, v in sorted(causes.items())) or "none"))
    for k in doc["rankings"]:
        tau = "-" if k["kendall_tau"] is None else f"{k['kendall_tau']:.2f}"
        print(f"  {k['bench']:10s} {k['size']:6d}  τ = {tau:>5s} (goal >= 0.8)  best measured "
              f"{k['best_measured']}, simulated {k['best_simulated']}")
    cpu_file = Path(out) / f"cpu-{preset}.json"
    if cpu_file.is_file():
        c = json.loads(cpu_file.read_text())
        sh = c["shares"]
        print(f"CPU while measuring ({os.cpu_count()} cores, load average {c['load_before']:.1f} before): "
              + ", ".join(f"{k} {100 * sh[k]:.0f}%" for k in ("user", "nice", "system", "softirq", "idle")))
    return doc


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hosts", type=int, default=4, help="hosts of the clusters measured (default %(default)s)")
    ap.add_argument("--reps-max", type=int, default=30)
    ap.add_argument("--p2p", choices=("ring", "pingpong"), default="pingpong",
                    help="which point-to-point benchmark's times messages draw (default %(default)s)")
    ap.add_argument("--skew", action="store_true", help="start each rank as late as measured")
    ap.add_argument("--fair", action="store_true",
                    help="with the drawn model: a rank's messages in flight share its link (default: one after "
                         "the other)")
    ap.add_argument("--models", default="drawn,shaped",
                    help="drawn (times drawn from the p2p distributions), shaped (a link with a token bucket "
                         "fitted to pingpong), or both (default)")
    ap.add_argument("--presets", default="fast-ethernet,gige",
                    help="networks, comma-separated: cluster presets, or link specs as `cluster up --link` "
                         "takes them; with a spec among them separate networks by ';' (e.g. "
                         "'fast-ethernet;rate=10mbit,delay=50us') (default %(default)s)")
    ap.add_argument("--keep", metavar="DIR", help="store the runs here (default: a temporary directory)")
    ap.add_argument("--again", metavar="DIR", help="do not measure: simulate the runs kept in DIR again")
    a = ap.parse_args()
    if not a.again and os.geteuid() != 0:
        sys.exit("emulated clusters need root")
    with tempfile.TemporaryDirectory(prefix="sim-validate-") as tmp:
        out = Path(a.again or a.keep or tmp)
        models = a.models.split(",")
        if not set(models) <= {"drawn", "shaped"} or (a.fair and "shaped" in models):
            sys.exit("--models: drawn, shaped or both (--fair only with drawn)")
        docs = {m: [] for m in models}
        for network in networks(a.presets):
            if not a.again:
                measure(network, a.hosts, out, a.reps_max)
            for m in models:
                docs[m].append(simulate(tag(network), m, a.p2p, a.skew, a.fair, out))
            print(link_fidelity(out, tag(network)))
    print()
    for m, ds in docs.items():
        cells = sum(len(d["rows"]) for d in ds)
        within = sum(d["within_15pct"] * len(d["rows"]) for d in ds) / cells
        taus = [k["kendall_tau"] for d in ds for k in d["rankings"] if k["kendall_tau"] is not None]
        per = ", ".join(f"{100 * d['within_15pct']:.0f}%" for d in ds)
        print(f"{m:7s} all: {100 * within:.0f}% of {cells} cells within 15% ({per} per preset); Kendall τ >= 0.8 "
              f"in {sum(t >= 0.8 for t in taus)} of {len(taus)} collective × size")


if __name__ == "__main__":
    main()
