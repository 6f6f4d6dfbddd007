# SPDX-License-Identifier: BSD-3-Clause
"""Cost models fitted per algorithm, to leave out of the adaptive search's
next sizes the algorithms that are out of the race. An algorithm that is one
of our cost models (its library's model_names) is that model under Hockney
costs, linear in (α, β); one without gets α + β·n. (α, β) ≥ 0 are fitted by
least squares in relative error to the medians nearest the size predicted,
and the fit's largest relative residual r says how far to trust it: X is out
when some Y is predicted faster by (1 + margin)(1 + r_X)(1 + r_Y). The
library's default is never fitted nor left out. Method: docs/explanation/
tuner.md, "The adaptive search"."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import nnls

from mpiscope.models.costmodels import Costs, find, predict_time
from mpiscope.mpilibs.algorithm_catalog import DEFAULT

HOCKNEY_LINE = "hockney line"


def model_of(coll: str, name: str, model_names: dict):
    """Our cost model's name for a library algorithm (`model_names`: the
    library's, mpilibs: model_names), or None."""
    m = model_names.get(name)
    return m if m and find(coll, m) else None


def basis(coll: str, model: str | None, p: int, sizes) -> np.ndarray:
    """(len(sizes), 2): the coefficients of α and β at each size of our cost
    model `model` (None: the Hockney line)."""
    if model is None:
        return np.array([[1.0, float(s)] for s in sizes])
    return np.array(
        [
            [
                predict_time(coll, model, s, p, Costs.hockney(1.0, 0.0)),
                predict_time(coll, model, s, p, Costs.hockney(0.0, 1.0)),
            ]
            for s in sizes
        ]
    )


@dataclass(frozen=True)
class Fit:
    coll: str
    name: str
    p: int
    alpha: float
    beta: float
    residual: float  # largest relative residual at the measured sizes
    model: str  # our cost model's name, or HOCKNEY_LINE

    def predict(self, size) -> float:
        a, b = basis(self.coll, None if self.model == HOCKNEY_LINE else self.model, self.p, [size])[0]
        return self.alpha * a + self.beta * b


def fit(coll: str, name: str, p: int, medians: dict, model_names: dict, min_points: int = 3) -> Fit | None:
    """The fit to {size: median seconds}, or None with fewer than min_points
    sizes; `model_names` the library's (model_of)."""
    sizes = sorted(s for s, t in medians.items() if t and t > 0)
    if len(sizes) < min_points:
        return None
    t = np.array([medians[s] for s in sizes])
    model = model_of(coll, name, model_names)
    X = basis(coll, model, p, sizes)
    (a, b), _ = nnls(X / t[:, None], np.ones(len(sizes)))
    pred = X @ np.array([a, b])
    resid = float(np.max(np.abs(pred / t - 1.0)))
    return Fit(coll, name, p, float(a), float(b), resid, model or HOCKNEY_LINE)


def out_of_race(fits: dict, size, margin: float) -> set:
    """The names of `fits` {name: Fit} some other fitted algorithm is predicted
    to beat at `size` by more than the margin and both fits' residuals."""
    pred = {n: f.predict(size) for n, f in fits.items() if n != DEFAULT}
    out = set()
    for x, tx in pred.items():
        for y, ty in pred.items():
            if y != x and ty > 0 and tx > (1 + margin) * (1 + fits[x].residual) * (1 + fits[y].residual) * ty:
                out.add(x)
                break
    return out
