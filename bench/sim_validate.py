# SPDX-License-Identifier: BSD-3-Clause
"""Simulated against measured on an emulated cluster, at Fast Ethernet and
at GigE (--presets).

For each network: every algorithm of allgather, allreduce and bcast at three
sizes (1 KiB, 16 KiB, 64 KiB) is measured on an emulated cluster of --hosts
hosts (one rank each, the default MPI over TCP), then simulated with costs
from the point-to-point benchmarks measured on the same cluster just before
(`mpiscope sim check --from-run`), by two models side by side: `drawn`,
per-message one-way times drawn from their distributions at 256 B - 256 KiB
(the sizes the algorithms' messages have; 20 replicates), and `shaped`, a
link whose rate and token bucket are fitted to pingpong (`--shaped-link`:
an idle link lets a burst through, a busy one only its rate, as the
cluster's tbf does). In both, every message costs a lone pingpong
message's time; with --exchange, one whose sender receives from the same
peer at once (an exchange: a sendrecv pair) costs the ring's time less the
pingpong's more, per size (at 2 hosts the ring is such an exchange). With --skew, each rank's start
is drawn from the collectives' measured lateness.

Per network and model, the tables give every cell (collective, algorithm,
size): the measured median with its 95% CI, the simulated time, the error
and, for a cell that misses 15%, the cause (the measured median unsure by
more than 15%, simulated high, simulated low); then per collective and
size Kendall's tau of the algorithms' order, measured against simulated,
and the best algorithm of each. Per network also how fast the emulated
link carried 256 KiB against its nominal TCP payload rate, alone (pingpong)
and with every host sending at once (ring), and where the machine's CPU
time went while measuring (user, nice, system, softirq, idle; of all
cores): with few cores the ranks and the links' emulation share them. The
last table sums up per model.
Goals: >= 90% of the cells within 15%; Kendall's tau >= 0.8.

Needs root (emulated clusters are network namespaces), except with --again;
no peer tool.

To reproduce (as root; about a minute per network at 4 hosts, the
simulations a minute more):

    .venv/bin/python bench/sim_validate.py --hosts 4 --presets fast-ethernet,gige --models drawn,shaped --p2p pingpong --json sim-validate.json
    .venv/bin/python bench/sim_validate.py --again DIR --skew      # simulate runs kept with --keep DIR again
"""

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import benchjson
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
    t0 = cpu_ticks()
    try:
        common = [
            "--cluster",
            name,
            "-n",
            hosts,
            "--reps-min",
            5,
            "--reps-max",
            reps_max,
            "--time-budget",
            2,
            "--out",
            out,
        ]
        mpiscope("run", *common, "--bench", "pingpong,ring", "--sizes", P2P_SIZES, "--label", f"p2p-{preset}")
        mpiscope("run", *common, "--bench", COLLS, "--algo", "all", "--sizes", SIZES, "--label", f"validate-{preset}")
    finally:
        mpiscope("cluster", "down", name, check=False)
    cpu = cpu_shares(t0, cpu_ticks())
    (Path(out) / f"cpu-{preset}.json").write_text(json.dumps({"shares": cpu}))


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
    return [
        preset,
        size // 1024,
        nominal / 1e6,
        rates["pingpong"] / 1e6,
        rates["pingpong"] / nominal,
        rates["ring"] / 1e6,
        rates["ring"] / nominal,
    ]


def simulate(preset, model, p2p, skew, fair, exchange, out):
    """`mpiscope sim check` of one network by one model: (its document, the tables printed)."""
    model_args = ["--sample", "--replicates", 20] if model == "drawn" else ["--shaped-link"]
    args = (
        [
            "sim",
            "check",
            f"validate-{preset}",
            "--from-run",
            f"p2p-{preset}",
            "--p2p",
            p2p,
            *model_args,
            "--json",
            "--out",
            out,
            "--eager",
            OMPI_TCP_EAGER,
        ]
        + (["--skew-from-run"] if skew else [])
        + (["--fair"] if fair else [])
        + (["--exchange-from-ring"] if exchange else [])
    )
    doc = json.loads(mpiscope(*args).stdout)
    rows = doc["rows"]
    what = (
        f"times drawn from p2p-{preset}'s {p2p}"
        if model == "drawn"
        else f"a shaped link fitted to p2p-{preset}'s pingpong (burst {doc['costs']['burst']:.0f} B, "
        f"{1e-6 / doc['costs']['G']:.1f} MB/s), latency of its {p2p} ({doc['costs']['L'] * 1e6:.1f} us)"
    )
    how = (
        (
            ", an exchange (a message with one the other way at once) charged its ring's time less its pingpong's more"
            if doc.get("exchange")
            else ""
        )
        + (", starts from the measured lateness" if skew else "")
        + (", send channels shared fairly" if fair else ", sends one after the other, Open MPI's rendezvous")
    )
    causes = {}
    for r in rows:
        if r["cause"]:
            causes[r["cause"]] = causes.get(r["cause"], 0) + 1
    cells = benchjson.show(
        f"{preset}, {doc['p']} hosts (run {doc['run_id']}), model {model}",
        ["bench", "algorithm", "size B", "measured us", "CI low us", "CI high us", "simulated us", "error %", "cause"],
        [
            [
                r["bench"],
                r["algo"],
                r["size"],
                r["measured_s"] * 1e6,
                r["measured_ci_s"][0] * 1e6,
                r["measured_ci_s"][1] * 1e6,
                r["simulated_s"] * 1e6,
                100 * r["rel_error"],
                r["cause"] or "",
            ]
            for r in rows
        ],
        [
            f"model: {what}{how}",
            f"within 15%: {100 * doc['within_15pct']:.0f}% of {len(rows)} cells (goal >= 90%); missed: "
            + (", ".join(f"{k} {v}" for k, v in sorted(causes.items())) or "none"),
        ],
    )
    ranks = benchjson.show(
        f"{preset}, model {model}: the algorithms' order, measured against simulated",
        ["bench", "size B", "Kendall tau", "ordered pairs", "simulated alike", "best measured", "best simulated"],
        [
            [
                k["bench"],
                k["size"],
                k["kendall_tau"],
                k["ordered_pairs"],
                k["ordered_alike"],
                k["best_measured"],
                k["best_simulated"],
            ]
            for k in doc["rankings"]
        ],
        [
            "goal: tau >= 0.8",
            "ordered pairs: pairs of algorithms whose measured medians' 95% intervals do not overlap; "
            "simulated alike: of those, the pairs the simulation orders the same way",
        ],
    )
    return doc, [cells, ranks]


def cpu_row(out, preset):
    """The machine's CPU shares while the network's runs measured (none for runs kept without them)."""
    cpu_file = Path(out) / f"cpu-{preset}.json"
    if not cpu_file.is_file():
        return None
    sh = json.loads(cpu_file.read_text())["shares"]
    return [preset, os.cpu_count(), *(100 * sh[k] for k in ("user", "nice", "system", "softirq", "idle"))]


def main():
    ap = benchjson.parser(__doc__)
    ap.add_argument(
        "--hosts",
        type=benchjson.count(2, 256),
        default=4,
        help="hosts of the clusters measured, 2 to 256, each wants a core of its own "
        "(default %(default)s; 8 hosts: bench/device/sim_validate_8hosts.sh)",
    )
    ap.add_argument(
        "--reps-max", type=int, default=30, help="repetitions at most per series measured (default %(default)s)"
    )
    ap.add_argument(
        "--p2p",
        choices=("ring", "pingpong"),
        default="pingpong",
        help="which point-to-point benchmark's times messages draw (default %(default)s)",
    )
    ap.add_argument("--skew", action="store_true", help="start each rank as late as measured")
    ap.add_argument(
        "--exchange",
        action="store_true",
        help="charge a message with one the other way at once (an exchange) from the ring measured beside "
        "the pingpong (default: every message as a lone pingpong message)",
    )
    ap.add_argument(
        "--fair",
        action="store_true",
        help="with the drawn model: a rank's messages in flight share its link (default: one after the other)",
    )
    ap.add_argument(
        "--models",
        default="drawn,shaped",
        help="drawn (times drawn from the p2p distributions), shaped (a link with a token bucket "
        "fitted to pingpong), or both (default)",
    )
    ap.add_argument(
        "--presets",
        default="fast-ethernet,gige",
        help="networks, comma-separated: cluster presets, or link specs as `cluster up --link` "
        "takes them; with a spec among them separate networks by ';' (e.g. "
        "'fast-ethernet;rate=10mbit,delay=50us') (default %(default)s)",
    )
    ap.add_argument("--keep", metavar="DIR", help="store the runs in DIR (default: a temporary directory)")
    ap.add_argument("--again", metavar="DIR", help="do not measure: simulate the runs kept in DIR again")
    a = benchjson.parse(ap)
    models = a.models.split(",")
    if not set(models) <= {"drawn", "shaped"} or (a.fair and "shaped" in models):
        ap.error("--models: drawn, shaped or both (--fair only with drawn)")
    if not a.again and os.geteuid() != 0:
        sys.exit("emulated clusters need root")
    tables, links, cpus = [], [], []
    with tempfile.TemporaryDirectory(prefix="sim-validate-") as tmp:
        out = Path(a.again or a.keep or tmp)
        docs = {m: [] for m in models}
        for network in networks(a.presets):
            if not a.again:
                measure(network, a.hosts, out, a.reps_max)
            for m in models:
                doc, shown = simulate(tag(network), m, a.p2p, a.skew, a.fair, a.exchange, out)
                docs[m].append(doc)
                tables += shown
            links.append(link_fidelity(out, tag(network)))
            cpus.append(cpu_row(out, tag(network)))
    tables.append(
        benchjson.show(
            "the emulated link at its largest size against its nominal TCP payload rate",
            [
                "network",
                "size KiB",
                "nominal MB/s",
                "pingpong MB/s",
                "pingpong / nominal",
                "ring MB/s",
                "ring / nominal",
            ],
            links,
            [
                "pingpong: one message at a time; ring: every host sending at once (each host's link carries one "
                "message each way, so a faithful emulation is as fast as pingpong)"
            ],
        )
    )
    if any(cpus):
        tables.append(
            benchjson.show(
                "CPU while measuring (shares of all cores)",
                ["network", "cores", "user %", "nice %", "system %", "softirq %", "idle %"],
                [c for c in cpus if c],
            )
        )
    summary = []
    for m, ds in docs.items():
        cells = sum(len(d["rows"]) for d in ds)
        within = sum(d["within_15pct"] * len(d["rows"]) for d in ds) / cells
        taus = [k["kendall_tau"] for d in ds for k in d["rankings"] if k["kendall_tau"] is not None]
        ordered = sum(k["ordered_pairs"] for d in ds for k in d["rankings"])
        alike = sum(k["ordered_alike"] for d in ds for k in d["rankings"])
        summary.append(
            [
                m,
                cells,
                100 * within,
                ", ".join(f"{100 * d['within_15pct']:.0f}%" for d in ds),
                sum(t >= 0.8 for t in taus),
                len(taus),
                ordered,
                100 * alike / ordered if ordered else None,
            ]
        )
    tables.append(
        benchjson.show(
            "all networks",
            [
                "model",
                "cells",
                "within 15% %",
                "within 15% per network",
                "tau >= 0.8",
                "collective x size with a tau",
                "ordered pairs",
                "simulated alike %",
            ],
            summary,
            [
                "goals: >= 90% of the cells within 15%; Kendall's tau >= 0.8",
                "ordered pairs: algorithm pairs whose measured intervals do not overlap, over all collectives "
                "and sizes; simulated alike: the share the simulation orders the same way",
            ],
        )
    )
    benchjson.write(a, "sim_validate", tables, {m: ds for m, ds in docs.items()}, mpi=benchjson.default_mpi())


if __name__ == "__main__":
    main()
