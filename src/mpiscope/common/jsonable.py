"""Turning results into JSON-able data (JSON has no NaN or infinity)."""

import dataclasses
import math

import numpy as np


def plain(obj):
    """`obj` as JSON-able data: dataclasses (Estimates among them) as dicts,
    numpy scalars and arrays as Python numbers and lists, NaN and inf as None."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return plain(dataclasses.asdict(obj))
    if isinstance(obj, dict):
        return {str(k): plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [plain(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return [plain(v) for v in obj.tolist()]
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        x = float(obj)
        return x if math.isfinite(x) else None
    return obj
