# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope model predict` as a process: the ranked algorithms and their
costs in text and JSON, and bad input refused with exit code 2."""

import json

import pytest

from runcli import mpiscope


def test_model_predict_cli():
    p = mpiscope("model", "predict", "--alpha", "50us", "--beta", "0.01us/B", "-p", 8, "--bench",
                 "allreduce", "--size", "64K", "--crossover")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    ranked = [l.split()[1] for l in lines if l.strip()[:1].isdigit() and len(l.split()) > 2
              and l.split()[1].isidentifier()]
    assert ranked[:4] == ["rabenseifner", "ring", "recursive_doubling", "fan_in_fan_out"]
    assert "1446.9" in p.stdout          # 6α + 1.75·65536·β in µs
    assert any(l.split()[:2] == ["12004", "rabenseifner"] for l in lines)
    p = mpiscope("model", "predict", "--alpha-s", "24us", "--beta-s", "0.0825us/B", "--alpha-r", "180us",
                 "--beta-r", "1.063us/B", "-p", 8, "--bench", "allgather", "--size", "8K", "--json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["rank_by"] == "sr" and doc["predictions"][0]["algo"] == "full_fan_out"
    assert all(r["sender_receiver_s"] is not None for r in doc["predictions"])


@pytest.mark.parametrize("argv, message", [
    (("--alpha", "50us", "--beta", "1ns/B", "-p", 8, "--bench", "gather", "--size", "1K"),
     "no cost models; choose from allgather"),
    (("--alpha", "50us", "-p", 8, "--bench", "bcast", "--size", "1K"), "give --alpha and --beta"),
    (("--alpha", "fast", "--beta", "1ns/B", "-p", 8, "--bench", "bcast", "--size", "1K"), "is not a time"),
    (("--alpha-s", "1us", "--beta", "1ns/B", "--alpha", "1us", "-p", 8, "--bench", "bcast", "--size", "1K"),
     "missing beta_s, alpha_r, beta_r"),
    (("--alpha", "1us", "--beta", "1ns/B", "-p", 8, "--bench", "bcast"), "give --size"),
])
def test_model_predict_bad_input_exits_2(argv, message):
    p = mpiscope("model", "predict", *argv)
    assert p.returncode == 2 and message in p.stderr, p.stderr
