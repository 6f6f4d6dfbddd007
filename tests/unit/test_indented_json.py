# SPDX-License-Identifier: BSD-3-Clause
"""indented_json.dumps writes json.dumps(obj, indent=N, default=...) to the
byte, encoding plain data without json's pure-Python indenting encoder."""

import json
import random
from pathlib import Path

import pytest

from mpiscope.common import indented_json

SCALARS = [
    None,
    True,
    False,
    0,
    -5,
    2**70,
    1.5,
    -0.0,
    1e-300,
    0.1 + 0.2,
    float("nan"),
    float("inf"),
    -float("inf"),
    "",
    'a"b\\\n\u00e9\U0001f600',
    "x\x00\x1f",
]


def _random_doc(rng, depth=0):
    r = rng.random()
    if depth > 4 or r < 0.5:
        return rng.choice(SCALARS + [rng.random(), "k" * rng.randint(0, 4)])
    if r < 0.75:
        return [_random_doc(rng, depth + 1) for _ in range(rng.randint(0, 5))]
    if r < 0.8:
        return tuple(_random_doc(rng, depth + 1) for _ in range(rng.randint(0, 3)))
    return {
        f"k{i}" if rng.random() < 0.9 else f'\u00e9"{i}': _random_doc(rng, depth + 1) for i in range(rng.randint(0, 5))
    }


@pytest.mark.parametrize("indent", [1, 2, 4])
def test_the_same_text_as_json_dumps(indent):
    rng = random.Random(indent)
    for _ in range(3000):
        doc = _random_doc(rng)
        assert indented_json.dumps(doc, indent) == json.dumps(doc, indent=indent)


def test_plain_data_needs_no_json_dumps(monkeypatch):
    doc = {
        "rows": [{"bench": "pingpong", "n": 3, "median": 1.5e-6, "quality": {"flags": [], "details": {}}}] * 3,
        "context": {"sizes": [1, 2, 4], "late": {"arrived": 1}, "label": None},
        "empty": [[], {}],
    }
    expected = json.dumps(doc, indent=2)

    def refused(*args, **kwargs):
        raise AssertionError("json.dumps was asked")

    monkeypatch.setattr(indented_json.json, "dumps", refused)
    assert indented_json.dumps(doc, 2) == expected


def test_default_and_what_only_json_knows():
    class Half(float):
        pass

    for doc in (
        {"p": Path("/x"), "l": [Path("/y"), 1], "t": (1, (2,))},
        {1: "int key", "a": [True]},
        {"a": Half(0.5), "b": [Half(2)]},
    ):
        assert indented_json.dumps(doc, 2, default=str) == json.dumps(doc, indent=2, default=str)
    with pytest.raises(TypeError):
        indented_json.dumps({"a": Path("/x")}, 2)
