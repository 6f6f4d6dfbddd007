# SPDX-License-Identifier: BSD-3-Clause
"""Turning results into JSON-able data (JSON has no NaN or infinity)."""

from __future__ import annotations

import math

TYPE_CHECKING = False  # typing is not imported at run time: `mpiscope show` starts without it
if TYPE_CHECKING:
    from typing import Any


_AS_IS = (str, int, bool, type(None))


def plain(obj: Any) -> Any:
    """`obj` as JSON-able data: dataclasses (Estimates among them) as dicts,
    numpy scalars and arrays as Python numbers and lists, NaN and inf as None."""
    kind = type(obj)  # the built-in types first, by their exact type: most values are
    if kind is float:
        return obj if math.isfinite(obj) else None
    if kind in _AS_IS:
        return obj
    if kind is dict:
        return {k if type(k) is str else str(k): plain(v) for k, v in obj.items()}
    if kind is list or kind is tuple:
        return [plain(v) for v in obj]
    if hasattr(obj, "__dataclass_fields__") and not isinstance(obj, type):
        import dataclasses  # only when there is one (start-up)

        return plain(dataclasses.asdict(obj))
    if isinstance(obj, dict):
        return {str(k): plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [plain(v) for v in obj]
    # numpy arrays and scalars, recognized without importing numpy (start-up)
    if type(obj).__module__ == "numpy" and hasattr(obj, "tolist"):
        return plain(obj.tolist())
    if isinstance(obj, bool):
        return bool(obj)
    if isinstance(obj, int):
        return int(obj)
    if isinstance(obj, float):
        x = float(obj)
        return x if math.isfinite(x) else None
    return obj


def dumps(doc: object) -> str:
    """JSON text of `doc` (NaN and infinities become null), newline-terminated."""
    import json  # here: most importers need plain() alone

    return json.dumps(plain(doc), indent=2) + "\n"
