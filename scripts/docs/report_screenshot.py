#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The pictures of a report in the documentation (docs/images/report-*.png):
writes a synthetic run (tests/rawgen.py: no MPI, no engine), renders its
report with `mpiscope report`, opens it in the headless Chromium the report
tests drive (tests/browser.py) and keeps two screenshots: the top of the
report, and the start of one benchmark's section with its figures.

    .venv/bin/python scripts/docs/report_screenshot.py [--out-dir docs/images]

`make docs` runs it when a picture is missing, `make docs SCREENSHOTS=1`
every time. Exit code 0, or 2 when Chromium or its driver is missing."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))
from browser import CHROMEDRIVER, CHROMIUM, browser  # noqa: E402
from rawgen import RunBuilder, SeriesSpec, context_for  # noqa: E402

RUN_ID = "20240601-120000-demo"
SIZES = [8, 64, 1024, 8192, 65536, 262144, 1048576]
WIDTH = 1280
SECTION = "bench-pingpong-mpi"   # the section shown with its figures


def _reps(rng, n, seconds):
    """n repetition times around `seconds`: a narrow body and a rare slow tail."""
    t = seconds * rng.lognormal(0.0, 0.04, n)
    tail = rng.random(n) < 0.03
    t[tail] *= rng.uniform(1.3, 3.0, tail.sum())
    return t


def demo_run(out_root: Path) -> Path:
    """A 4-rank run of pingpong, bw and allreduce at 8 B – 1 MiB, ingested."""
    from mpiscope.store.ingest import ingest

    rng = np.random.default_rng(3)
    run_dir = out_root / RUN_ID
    rb = RunBuilder(run_dir, nranks=4)
    for size in SIZES:
        wire = size / 8e9                       # an 8 GB/s link
        rb.add(SeriesSpec("pingpong", size, list(_reps(rng, 400, 0.3e-6 + wire))))
        rb.add(SeriesSpec("allreduce", size, list(_reps(rng, 300, 0.9e-6 + 2.5 * wire))))
        moved = 64 * size                        # a window of 64 messages
        rb.add(SeriesSpec("bw", size, list(moved / _reps(rng, 200, 0.4e-6 + 64 * wire))))
    rb.write()
    ctx = context_for(run_id=RUN_ID, created="2024-06-01T12:00:00+00:00", np=4,
                      benches=["pingpong", "bw", "allreduce"], sizes=SIZES)
    (run_dir / "context.json").write_text(json.dumps(ctx, indent=2))
    ingest(run_dir, ctx)
    return run_dir


def screenshots(html: Path, out_dir: Path) -> list[Path]:
    """The top of the report and one benchmark's section, as PNG files."""
    driver = browser()
    try:
        driver.set_window_size(WIDTH, 1000)
        driver.get(html.as_uri())
        top = out_dir / "report-overview.png"
        driver.save_screenshot(str(top))
        driver.set_window_size(WIDTH, 1300)
        section = driver.find_element("css selector", f"section#{SECTION}")
        driver.execute_script("arguments[0].scrollIntoView()", section)
        detail = out_dir / "report-series.png"
        driver.save_screenshot(str(detail))
        return [top, detail]
    finally:
        driver.quit()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out-dir", type=Path, default=REPO / "docs" / "images",
                    help="where the pictures go (default docs/images)")
    args = ap.parse_args(argv)
    if not (CHROMIUM and CHROMEDRIVER):
        print("report_screenshot: chromium and chromedriver are needed (make setup installs them)",
              file=sys.stderr)
        return 2
    args.out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = demo_run(Path(tmp))
        html = Path(tmp) / "report.html"
        p = subprocess.run([sys.executable, "-m", "mpiscope.cli", "report", run_dir.name, "-o", str(html),
                            "--out", tmp], capture_output=True, text=True)
        if p.returncode != 0:
            print(f"report_screenshot: mpiscope report failed:\n{p.stderr[-2000:]}", file=sys.stderr)
            return 1
        for path in screenshots(html, args.out_dir):
            print(f"report_screenshot: wrote {path.relative_to(REPO) if REPO in path.parents else path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
