# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope cluster up` and `cluster list` (emulated cluster, root): their
--json documents validate against their JSON Schemas."""

import os

import pytest

from schemas import json_of, validate


@pytest.mark.skipif(os.geteuid() != 0, reason="emulated clusters need root")
def test_cluster_up_and_list(capsys):
    from mpiscope.cluster import manager

    name = f"t{os.getpid() % 100000}-schema"
    try:
        doc = json_of(["cluster", "up", name, "--hosts", 2, "--link", "rate=100mbit,delay=20us", "--json"],
                      capsys)
        validate("cluster-up", doc)
        assert doc["name"] == name and len(doc["hosts_detail"]) == 2
        doc = json_of(["cluster", "list", "--json"], capsys)
        validate("cluster-list", doc)
        assert name in {c["name"] for c in doc["clusters"]}
    finally:
        manager.teardown(name)
