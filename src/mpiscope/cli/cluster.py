# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope cluster up|list|exec|down`: emulated clusters on one machine.

`add_cluster_commands(subparsers)` registers the `cluster` command in the
main CLI; `python -m mpiscope.cli cluster ...` runs them without the installed script.
"""

from __future__ import annotations

import argparse
import sys

from mpiscope.cluster.netns import ClusterError
from mpiscope.cluster.spec import PRESETS, format_rate, format_time, make_spec, payload_rate
from mpiscope.cli import types
from mpiscope.cli.commands import command_parser

MAX_HOSTS = 256  # network namespaces one machine holds comfortably
MAX_SLOTS = 256  # ranks per emulated host
_EPILOG = (
    """link specs: comma lists of rate=100mbit (bit/kbit/mbit/gbit), delay=50us (ns/us/ms/s),
  jitter=10us, loss=0.1%, queue=64K or queue=20ms (port buffer), mtu=9000 (--link only)

presets:
"""
    + "".join(f"  {n:14s} {p.description}\n" for n, p in PRESETS.items())
    + """
examples:
  mpiscope cluster up fe --hosts 4 --preset fast-ethernet
  mpiscope cluster up lossy --hosts 2 --link rate=100mbit,delay=50us,loss=2%
  mpiscope cluster up tree --hosts 8 --switches 2 --link rate=1gbit --uplink rate=100mbit,delay=20us
  mpiscope cluster exec fe h1 -- hostname
  mpiscope run --cluster fe -n 4 --bench multipair --sizes 64K
  mpiscope cluster down fe"""
)


def add_cluster_command(subparsers) -> None:
    p = command_parser(
        subparsers,
        "cluster",
        description="""\
Emulated clusters: every host a network namespace with its own host name, joined by
switches (bridges); links shaped for rate (tbf), loss (iptables statistic) and delay
(mpiscope-delayd on NFQUEUE). Addresses come from 198.18.0.0/15 and exist only inside the
cluster.\
""",
        epilog=_EPILOG,
    )
    # The main CLI's parser class (its error() exits 2 with a hint) for the subcommands too.
    sub = p.add_subparsers(dest="cluster_command", metavar="SUBCOMMAND", parser_class=subparsers._parser_class)
    sub.required = True

    u = sub.add_parser(
        "up", help="create a cluster", epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    u.add_argument("name", metavar="NAME", type=types.cluster_name)
    u.add_argument("--hosts", type=types.count(2, MAX_HOSTS), required=True, help=f"number of hosts (2 to {MAX_HOSTS})")
    u.add_argument("--slots", type=types.count(1, MAX_SLOTS), default=1, help="MPI ranks per host (default 1)")
    u.add_argument(
        "--link", metavar="SPEC", type=types.text, help="host links, e.g. rate=100mbit,delay=50us,loss=0.1%%"
    )
    u.add_argument(
        "--switches", type=types.count(1, MAX_HOSTS), help="switches in a chain, hosts spread evenly (default 1)"
    )
    u.add_argument(
        "--uplink", metavar="SPEC", type=types.text, help="links between switches, e.g. rate=100mbit,delay=20us"
    )
    u.add_argument(
        "--preset", choices=sorted(PRESETS), help="a named network; --link/--uplink override single keys of it"
    )
    u.add_argument("--json", action="store_true", help="print the cluster's description as JSON")
    u.set_defaults(func=_cmd_up)

    ls = sub.add_parser("list", help="list clusters")
    ls.add_argument("--json", action="store_true")
    ls.set_defaults(func=_cmd_list)

    e = sub.add_parser("exec", help="run a command on a host: cluster exec NAME HOST -- CMD...")
    e.add_argument("name", metavar="NAME", type=types.cluster_name)
    e.add_argument("host", metavar="HOST", type=types.text, help="h0, h1, ... (or the host name or address)")
    e.add_argument("command", nargs=argparse.REMAINDER, metavar="-- CMD...")
    e.set_defaults(func=_cmd_exec)

    d = sub.add_parser("down", help="remove a cluster (namespaces, rules, helper processes)")
    d.add_argument("name", metavar="NAME", type=types.cluster_name)
    d.set_defaults(func=_cmd_down)
    return p


def _guarded(fn):
    """ClusterError (a system command failed) -> message and exit 1."""

    def wrapper(args):
        try:
            return fn(args)
        except ClusterError as e:
            sys.stderr.write(f"mpiscope: cluster: {e}\n")
            return 1

    return wrapper


def _describe_link(d):
    if d is None:
        return "-"
    parts = []
    if d.get("rate_bps"):
        parts.append(format_rate(d["rate_bps"]))
    if d.get("delay_s"):
        parts.append(f"delay {format_time(round(d['delay_s'] * 1e9))}")
    if d.get("jitter_s"):
        parts.append(f"jitter ±{format_time(round(d['jitter_s'] * 1e9))}")
    if d.get("loss"):
        parts.append(f"loss {d['loss'] * 100:g}%")
    return ", ".join(parts) or "unshaped"


@_guarded
def _cmd_up(args):
    from mpiscope.cluster import launching
    from mpiscope.cluster import manager
    from mpiscope.cluster.topology import plan as make_plan

    spec = make_spec(args.name, args.hosts, args.slots, args.link, args.switches, args.uplink, args.preset)
    manager.up(spec)
    plan = make_plan(spec)
    truth = launching.ground_truth(plan)
    if args.json:
        from mpiscope.common.documents import json_document

        sys.stdout.write(json_document("cluster-up", truth))
        return 0
    print(
        f"cluster {spec.name}: {spec.hosts} hosts x {spec.slots} slots on {spec.switches} "
        f"switch{'es' if spec.switches > 1 else ''}"
    )
    print(
        f"  host links: {_describe_link(truth['link'])}"
        + (
            f" (TCP payload at most {payload_rate(spec.link.rate_bps, spec.mtu) / 1e6:.2f} MB/s)"
            if spec.link.rate_bps
            else ""
        )
    )
    if spec.uplink is not None:
        print(f"  uplinks:    {_describe_link(truth['uplink'])}")
    for h in plan.hosts:
        print(f"  {h.name:4s} {h.hostname:24s} {h.address:15s} switch {h.switch}")
    print(f"run on it:  mpiscope run --cluster {spec.name} -n {spec.hosts * spec.slots} ...")
    print(f"remove it:  mpiscope cluster down {spec.name}")
    return 0


@_guarded
def _cmd_list(args):
    from mpiscope.cluster import manager

    rows = manager.list_clusters()
    if args.json:
        from mpiscope.common.documents import json_document

        sys.stdout.write(json_document("cluster-list", {"clusters": rows}))
        return 0
    if not rows:
        print("no emulated clusters")
        return 0
    print(f"{'NAME':20s} {'STATUS':10s} {'HOSTS':>5s} {'SLOTS':>5s} {'SW':>3s}  LINK / UPLINK")
    for r in rows:
        if "hosts" not in r:
            print(f"{r['name']:20s} {r['status']}")
            continue
        links = _describe_link(r["link"])
        if r.get("uplink"):
            links += " / " + _describe_link(r["uplink"])
        print(f"{r['name']:20s} {r['status']:10s} {r['hosts']:5d} {r['slots']:5d} {r['switches']:3d}  {links}")
    return 0


@_guarded
def _cmd_exec(args):
    from mpiscope.cluster import manager

    cmd = list(args.command)
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    return manager.exec_on(args.name, args.host, cmd)


@_guarded
def _cmd_down(args):
    from mpiscope.cluster import manager

    report = manager.down(args.name)
    msg = f"cluster {args.name} removed"
    if report and report.get("packets"):
        msg += (
            f"; the delay program held {report['packets']} packets, actual minus target "
            f"delay: mean {report['error_mean_s'] * 1e6:+.1f} us, "
            f"range {report['error_min_s'] * 1e6:+.1f} .. {report['error_max_s'] * 1e6:+.1f} us"
        )
    print(msg)
    return 0
