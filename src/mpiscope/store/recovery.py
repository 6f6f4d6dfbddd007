# SPDX-License-Identifier: BSD-3-Clause
"""How well the clock synchronization recovered an injected clock error.

A run with `--clock-inject` distorts every rank's timer by a known offset and
drift (the raw file header's `inject`); the engine records in the "after" sync
block the local times of the first series' start and the last series' end
(raw schema 2). The error is |estimated global − true global| at those two
times, where the true global time is rank 0's injected clock (native/clock/clock.h:
local = raw + offset + drift · (raw − epoch)).
"""

from __future__ import annotations

import math


def true_global(local, inject, inject0):
    """Rank 0's injected clock at the moment a rank's clock (`inject`) reads `local`."""
    off, drift, epoch = inject["offset_s"], inject["drift"], inject["epoch_s"]
    raw = (local - off + drift * epoch) / (1.0 + drift)
    return raw + inject0["offset_s"] + inject0["drift"] * (raw - epoch)


def estimated_global(local, model):
    """The sync model's global time (docs/reference/formats/raw-files.md, sync blocks)."""
    return local - (model["offset_s"] + model["drift"] * (local - model["ref_s"]))


def _error(local, model, inject, inject0):
    if local is None or model is None:
        return None
    err = abs(estimated_global(local, model) - true_global(local, inject, inject0))
    return err if math.isfinite(err) else None


def recovery_error(sync_meta, model, inject, inject0):
    """{"start", "end"} errors in seconds, or None when the run had no
    injection or the block does not carry the times (schema 1, or a rank
    that did not finish)."""
    if not sync_meta or not inject or not inject0 or "t_first_local_s" not in sync_meta:
        return None
    return {
        "start": _error(sync_meta.get("t_first_local_s"), model, inject, inject0),
        "end": _error(sync_meta.get("t_last_local_s"), model, inject, inject0),
    }
