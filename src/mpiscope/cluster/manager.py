# SPDX-License-Identifier: BSD-3-Clause
"""cluster up / down / list / exec: building and removing emulated clusters.

`up` builds everything under a state directory created atomically (so two
`up NAME` cannot race) and removes everything again when any step fails or
it is interrupted. `down` removes whatever of a cluster exists — also what
a crashed `up` left behind — by name, never more.
"""

from __future__ import annotations

import contextlib
import datetime
import os
import shutil
import signal
import subprocess
import time

from mpiscope.common.atomic import write_text
from mpiscope.common.errors import UsageError
from mpiscope.cluster import delayd
from mpiscope.cluster import features
from mpiscope.cluster import launching
from mpiscope.cluster import shaping
from mpiscope.cluster import netns as ns
from mpiscope.cluster import state as st
from mpiscope.cluster.spec import ClusterSpec, check_name
from mpiscope.cluster.topology import Plan, plan as make_plan

STEPS = ("namespaces", "wiring", "shaping", "delay", "rules")


class _Interrupted(ns.ClusterError):
    pass


@contextlib.contextmanager
def _terminate_as_exception():
    """SIGTERM/SIGHUP during up: unwind (and clean up) instead of dying half-built."""

    def handler(signum, frame):
        raise _Interrupted(f"interrupted by signal {signum}")

    try:
        old = {s: signal.signal(s, handler) for s in (signal.SIGTERM, signal.SIGHUP)}
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def _needs_delay(plan: Plan):
    return bool(shaping.delay_queues(plan))


def up(spec: ClusterSpec, *, seed=1, fail_at=None):
    """Builds the cluster; returns its state. `fail_at` (a STEPS name) makes it
    fail deliberately at that step, to test the clean-up."""
    features.check_root()
    features.check_tools()
    plan = make_plan(spec)
    name = spec.name
    cdir = st.cluster_dir(name)
    if cdir.exists():
        raise UsageError(
            f"cluster '{name}' exists already; remove it first with "
            f"'mpiscope cluster down {name}' or choose another name"
        )
    leftovers = ns.list_netns(name)
    if leftovers:
        raise UsageError(
            f"namespaces of a cluster '{name}' exist ({', '.join(leftovers)}), "
            f"probably left by an interrupted run; 'mpiscope cluster down {name}' "
            f"removes them"
        )
    binary = delayd.ensure_built() if _needs_delay(plan) else None
    features.probe(spec, binary)
    st.ROOT.mkdir(parents=True, exist_ok=True)
    try:
        cdir.mkdir()
    except FileExistsError:
        raise UsageError(f"cluster '{name}' exists already") from None
    state = {
        "version": st.STATE_VERSION,
        "status": "creating",
        "spec": st.spec_to_json(spec),
        "created": datetime.datetime.now().isoformat(timespec="seconds"),
        "hosts": [
            {"name": h.name, "hostname": h.hostname, "address": h.address, "netns": h.netns, "switch": h.switch}
            for h in plan.hosts
        ],
        "switches": [s.netns for s in plan.switches],
        "delayd": None,
    }
    st.write(name, state)

    def step(label):
        if os.environ.get("MPISCOPE_TEST_UP_STALL") == label:  # docs/reference/test-hooks.md
            time.sleep(600)
        if fail_at == label:
            raise ns.ClusterError(f"deliberate failure at step '{label}' (test)")

    with _terminate_as_exception():
        try:
            for netns in plan.netns_names():
                ns.add_netns(netns)
                ns.set_sysctls(
                    netns,
                    {
                        "net/ipv6/conf/all/disable_ipv6": 1,
                        "net/ipv6/conf/default/disable_ipv6": 1,
                        "net/bridge/bridge-nf-call-iptables": 0,
                        "net/bridge/bridge-nf-call-ip6tables": 0,
                        "net/bridge/bridge-nf-call-arptables": 0,
                    },
                )
            (cdir / "uts").mkdir()
            for h in plan.hosts:
                ns.make_uts(cdir / "uts" / h.name, h.hostname)
            step("namespaces")
            for argv in shaping.wiring(plan):
                ns.run(argv)
            write_text(cdir / "hosts", launching.hosts_file(plan))
            write_text(cdir / "rsh", launching.rsh_script(plan, cdir), mode=0o755)
            step("wiring")
            for argv in shaping.rate_limits(plan):
                ns.run(argv)
            step("shaping")
            queues = [(h.netns, *rest) for h, *rest in shaping.delay_queues(plan)]
            if queues:
                pid, started = delayd.start(
                    binary, queues, cdir / "delayd.json", cdir / "delayd.log", seed=seed, mtu=plan.spec.mtu
                )
                state["delayd"] = {
                    "pid": pid,
                    "started": started,
                    "binary": str(binary),
                    "queues": [list(q) for q in queues],
                }
                st.write(name, state)
            step("delay")
            for h in plan.hosts:
                for argv in shaping.filter_rules(plan, h):
                    ns.run(ns.in_ns(h.netns, argv))
            step("rules")
            state["status"] = "up"
            st.write(name, state)
        except BaseException:
            teardown(name)
            raise
    return state


def _our_delay_programs(name):
    """Delay programs serving cluster `name` (found by their command line)."""
    marker = f"{ns.NETNS_DIR}/mps-{name}-"
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                args = f.read().split(b"\0")
        except OSError:
            continue
        if (
            args
            and args[0].endswith(b"mpiscope-delayd")
            and any(a.decode(errors="replace").startswith(marker) for a in args)
        ):
            found.append(int(entry))
    return found


def teardown(name):
    """Removes everything of cluster `name` that exists; returns the delay report, if any."""
    cdir = st.cluster_dir(name)
    state = st.read(name) or {}
    d = state.get("delayd") or {}
    if d.get("pid"):
        delayd.stop(d["pid"], d.get("started"))
    for pid in _our_delay_programs(name):
        delayd.stop(pid, ns.start_time(pid))
    report = None
    stats = cdir / "delayd.json"
    if d and stats.exists():
        report = delayd.summarize(delayd.report(None, None, stats))
    for netns in ns.list_netns(name):
        ns.stop_processes(ns.pids_in_netns(netns))
    uts = cdir / "uts"
    if uts.is_dir():
        for f in uts.iterdir():
            ns.remove_uts(f)
    for netns in ns.list_netns(name):
        ns.delete_netns(netns)
    if cdir.exists():
        shutil.rmtree(cdir, ignore_errors=True)
    remaining = ns.list_netns(name)
    if remaining:
        raise ns.ClusterError(f"could not remove namespaces {', '.join(remaining)}")
    return report


def down(name):
    check_name(name)
    features.check_root()
    if not st.cluster_dir(name).exists() and not ns.list_netns(name) and not _our_delay_programs(name):
        have = st.names()
        raise UsageError(f"no emulated cluster '{name}'" + (f" (there is: {', '.join(have)})" if have else ""))
    return teardown(name)


def list_clusters():
    """[{name, status, spec..., leftover}] of every cluster, also namespaces without state."""
    out = []
    for name in st.names():
        state = st.read(name) or {}
        entry = {"name": name, "status": state.get("status", "unknown")}
        if state.get("spec"):
            spec = st.spec_from_json(state["spec"])
            entry.update(spec.describe())
            d = state.get("delayd") or {}
            entry["delay_program"] = (
                ("running" if ns.alive(d.get("pid"), d.get("started")) else "stopped") if d else None
            )
        entry["created"] = state.get("created")
        out.append(entry)
    known = {e["name"] for e in out}
    orphans = {}
    for n in ns.list_netns():
        cluster = n[len("mps-") :].rsplit("-", 1)[0]
        if cluster not in known and not n.startswith("mps-probe-"):
            orphans.setdefault(cluster, []).append(n)
    for cluster, names in sorted(orphans.items()):
        out.append({"name": cluster, "status": "leftover (run cluster down)", "namespaces": names})
    return out


def exec_on(name, host, argv):
    """Runs argv on a host of the cluster with this terminal; returns its exit code."""
    state, plan = st.load(name)
    h = plan.host(host)
    if h is None:
        raise UsageError(f"cluster '{name}' has no host '{host}'; hosts: {', '.join(x.name for x in plan.hosts)}")
    if not argv:
        raise UsageError("cluster exec needs a command after --")
    try:
        return subprocess.call([str(st.cluster_dir(name) / "rsh"), "--argv", h.name, *argv])
    except KeyboardInterrupt:
        return 130


def delay_report(name):
    """The delay program's report now: per queue packets and error statistics, plus a summary."""
    state, _ = st.load(name)
    d = state.get("delayd")
    if not d:
        return None
    stats = delayd.report(d["pid"], d.get("started"), st.cluster_dir(name) / "delayd.json")
    return {"summary": delayd.summarize(stats), "detail": stats}
