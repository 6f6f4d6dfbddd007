# SPDX-License-Identifier: BSD-3-Clause
"""Where a cluster's state lives: /run/mpiscope/clusters/NAME/.

state.json        spec, plan summary, delay program pid, status (creating | up)
rsh               runs a command on a host (ssh stand-in for mpirun / mpiexec.hydra)
hosts             /etc/hosts as the emulated hosts see it
uts/hI            each host's UTS namespace (its own host name)
delayd.json       the delay program's report; delayd.log its messages
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from mpiscope.common.atomic import write_text
from mpiscope.common.errors import UsageError
from mpiscope.cluster.spec import ClusterSpec, Link, check_name
from mpiscope.cluster.topology import plan as make_plan
from mpiscope.common.inputs import InputError, read_json

ROOT = Path("/run/mpiscope/clusters")
STATE_VERSION = 1


def cluster_dir(name) -> Path:
    return ROOT / name


def spec_to_json(spec: ClusterSpec) -> dict:
    return {
        "name": spec.name,
        "hosts": spec.hosts,
        "slots": spec.slots,
        "switches": spec.switches,
        "preset": spec.preset,
        "link": dataclasses.asdict(spec.link),
        "uplink": dataclasses.asdict(spec.uplink) if spec.uplink else None,
    }


def spec_from_json(d: dict) -> ClusterSpec:
    return ClusterSpec(
        name=d["name"],
        hosts=d["hosts"],
        slots=d["slots"],
        switches=d["switches"],
        preset=d.get("preset"),
        link=Link(**d["link"]),
        uplink=Link(**d["uplink"]) if d.get("uplink") else None,
    )


def write(name, state: dict):
    write_text(cluster_dir(name) / "state.json", json.dumps(state, indent=2))


def read(name) -> dict | None:
    path = cluster_dir(name) / "state.json"
    try:
        return read_json(path, missing_ok=True)
    except InputError:
        return None


def names():
    try:
        return sorted(p.name for p in ROOT.iterdir() if p.is_dir())
    except FileNotFoundError:
        return []


def load(name):
    """(state, plan) of a cluster that is up; UsageError otherwise."""
    check_name(name)
    state = read(name)
    if state is None:
        have = names()
        raise UsageError(
            f"no emulated cluster '{name}'"
            + (f" (there is: {', '.join(have)})" if have else "")
            + f"; create it with 'mpiscope cluster up {name} --hosts N'"
        )
    if state.get("status") != "up":
        raise UsageError(
            f"cluster '{name}' is not up (status {state.get('status')}); remove it with 'mpiscope cluster down {name}'"
        )
    return state, make_plan(spec_from_json(state["spec"]))
