# SPDX-License-Identifier: BSD-3-Clause
"""Model parameters from the command line or a machine model file.

Times take a unit (s, ms, us or µs, ns; seconds without one); per-byte
costs are a time per byte ("0.01us/B", "1.2ns/B") or a bandwidth
("10GB/s", "800MiB/s", "12.5Gb/s" is not accepted: bytes only). A machine
model file is JSON with any of alpha, beta, gamma, alpha_s, beta_s,
alpha_r, beta_r, segment: numbers in seconds, seconds per byte and bytes,
or strings with units as above; or a LogGP machine model written by
`mpiscope loggp --save` (see from_loggp_model).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

from mpiscope.common.errors import UsageError
from mpiscope.common.sizes import MAX_SIZE
from mpiscope.models.costmodels.base import DEFAULT_SEGMENT, Costs

_TIME_UNITS = {"": 1.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ns": 1e-9}
_BYTE_UNITS = {"b": 1.0, "kb": 1e3, "mb": 1e6, "gb": 1e9, "kib": 1024.0, "mib": 1024.0**2, "gib": 1024.0**3}
_NUMBER = r"([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)"
_TIME = re.compile(rf"^\s*{_NUMBER}\s*(s|ms|us|µs|μs|ns)?\s*$")
_PER_BYTE = re.compile(rf"^\s*{_NUMBER}\s*(s|ms|us|µs|μs|ns)\s*/\s*B\s*$")
_BANDWIDTH = re.compile(rf"^\s*{_NUMBER}\s*([kmg]i?b|b)\s*/\s*s\s*$", re.IGNORECASE)

KEYS = ("alpha", "beta", "gamma", "alpha_s", "beta_s", "alpha_r", "beta_r")


def _finite(value, name, text) -> float:
    """`value` when it is a finite number: NaN or an infinity (1e999, a
    bandwidth of 1e309GB/s, which would be a cost of 0) is no cost."""
    if isinstance(value, bool) or not math.isfinite(value):
        raise UsageError(f"{name} '{text}' is not a finite number; give a cost such as 1.5us or 10GB/s")
    return float(value)


def parse_time(text, name="--alpha") -> float:
    if isinstance(text, (int, float)):
        return _finite(text, name, text)
    m = _TIME.match(str(text))
    if not m:
        raise UsageError(f"{name} '{text}' is not a time: write e.g. 50us, 1.5us, 2e-6")
    return _finite(float(m.group(1)) * _TIME_UNITS[m.group(2) or ""], name, text)


def parse_per_byte(text, name="--beta") -> float:
    """Seconds per byte from '0.01us/B', '1ns/B', '10GB/s' or a bare number (s/B)."""
    if isinstance(text, (int, float)):
        return _finite(text, name, text)
    t = str(text)
    m = _PER_BYTE.match(t)
    if m:
        return _finite(float(m.group(1)) * _TIME_UNITS[m.group(2)], name, text)
    m = _BANDWIDTH.match(t)
    if m:
        bw = _finite(float(m.group(1)) * _BYTE_UNITS[m.group(2).lower()], name, text)
        if bw <= 0:
            raise UsageError(f"{name} '{text}': a bandwidth must be positive")
        return 1.0 / bw
    m = _TIME.match(t)
    if m and not m.group(2):
        return _finite(float(m.group(1)), name, text)
    raise UsageError(f"{name} '{text}' is not a cost per byte: write e.g. 0.01us/B, 1ns/B or 10GB/s")


@dataclass(frozen=True)
class ModelParams:
    """What predictions need; None where not given."""

    alpha: float | None = None
    beta: float | None = None
    gamma: float = 0.0
    alpha_s: float | None = None
    beta_s: float | None = None
    alpha_r: float | None = None
    beta_r: float | None = None
    segment: int = DEFAULT_SEGMENT

    @property
    def has_sr(self) -> bool:
        return None not in (self.alpha_s, self.beta_s, self.alpha_r, self.beta_r)

    def hockney_costs(self) -> Costs | None:
        alpha, beta = self.alpha, self.beta
        if alpha is None and self.has_sr:
            alpha = self.alpha_s + self.alpha_r
        if beta is None and self.has_sr:
            beta = self.beta_s + self.beta_r
        if alpha is None or beta is None:
            return None
        return Costs.hockney(alpha, beta, self.gamma, self.segment)

    def sr_costs(self) -> Costs | None:
        if not self.has_sr:
            return None
        return Costs(self.alpha_s, self.beta_s, self.alpha_r, self.beta_r, self.gamma, self.segment)

    def with_defaults(self, other: "ModelParams") -> "ModelParams":
        """These values, and `other`'s where these are missing."""
        values = {
            k: getattr(self, k) if getattr(self, k) is not None else getattr(other, k) for k in KEYS if k != "gamma"
        }
        return ModelParams(gamma=self.gamma or other.gamma, segment=self.segment, **values)

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in KEYS + ("segment",)}


def from_values(values: dict, source: str, segment=None) -> ModelParams:
    """ModelParams from {key: text or number} (CLI options or a file's JSON)."""
    unknown = sorted(set(values) - set(KEYS) - {"segment"})
    if unknown:
        raise UsageError(
            f"{source}: unknown model parameter(s) {', '.join(unknown)}; known: {', '.join(KEYS)}, segment"
        )
    out = {}
    for k in KEYS:
        v = values.get(k)
        if v is None:
            continue
        out[k] = parse_time(v, f"{source} {k}") if k.startswith("alpha") else parse_per_byte(v, f"{source} {k}")
        if out[k] < 0:
            raise UsageError(f"{source}: {k} must not be negative")
    seg = segment if segment is not None else values.get("segment")
    if seg is not None:
        try:
            seg = int(seg)
        except (TypeError, ValueError, OverflowError):  # OverflowError: an infinity
            raise UsageError(f"{source}: segment must be a number of bytes, got {seg!r}") from None
        if not 1 <= seg <= MAX_SIZE:
            raise UsageError(f"{source}: segment must be from 1 to {MAX_SIZE} bytes, got {seg}")
    partial = [k for k in ("alpha_s", "beta_s", "alpha_r", "beta_r") if k in out]
    if partial and len(partial) < 4:
        missing = [k for k in ("alpha_s", "beta_s", "alpha_r", "beta_r") if k not in out]
        raise UsageError(
            f"{source}: the sender/receiver model needs alpha_s, beta_s, alpha_r and "
            f"beta_r; missing {', '.join(missing)}"
        )
    return ModelParams(gamma=out.pop("gamma", 0.0), segment=seg or DEFAULT_SEGMENT, **out)


def from_loggp_model(model) -> ModelParams:
    """α, β (and the sender/receiver split) from a LogGP machine model file
    (`mpiscope loggp --save`, machine_model.py): β = G, α = EEL − G·(the size
    EEL was measured at); the sender pays its overhead o_s per message,
    the receiver the rest of α and the bytes: αs = o_s, βs = 0, αr = α − o_s,
    βr = G."""
    eel, G, o_s = model.param("EEL"), model.param("G"), model.param("o_s")
    if not (math.isfinite(eel) and math.isfinite(G)):
        raise UsageError("--machine: the LogGP model has no EEL or G to take α and β from")
    alpha = max(0.0, eel - G * (model.base_size or 0))
    split = {}
    if math.isfinite(o_s) and 0 <= o_s <= alpha:
        split = {"alpha_s": o_s, "beta_s": 0.0, "alpha_r": alpha - o_s, "beta_r": G}
    return ModelParams(alpha=alpha, beta=G, **split)


def load_machine(path) -> ModelParams:
    """A machine model file: this module's plain JSON, or a LogGP model."""
    from mpiscope.common.inputs import MODEL_LIMIT, read_json

    path = Path(path)
    data = read_json(path, MODEL_LIMIT, "--machine", "give a machine model")
    if isinstance(data, dict) and data.get("format") == "mpiscope-machine-model":
        from mpiscope.models.machine_model import load

        return from_loggp_model(load(path))
    if not isinstance(data, dict):
        raise UsageError(f'--machine: {path} must hold a JSON object such as {{"alpha": "1.5us", "beta": "0.1ns/B"}}')
    return from_values(data, str(path))
