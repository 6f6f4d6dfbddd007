# SPDX-License-Identifier: BSD-3-Clause
"""Test helper: tools' logs as the tools write them, for `mpiscope import`.
The static samples are under tests/data/imports/ (OSU 5.6.1 and 7.4, IMB
2019 Update 6 and 2021.3, a ReFrame 4 perflog whose header a real ReFrame
run wrote); nightly_osu() writes a night of osu_allreduce -f per file, with
the caller's latencies, so a history of imported runs has a known step."""

from pathlib import Path

SAMPLES = Path(__file__).parent / "data" / "imports"
SIZES = (1024, 65536)


def osu_allreduce_text(latencies_us, version="7.4"):
    """osu_allreduce -f as OSU 7.4 prints it: {size: average latency in us}."""
    lines = ["", f"# OSU MPI Allreduce Latency Test v{version}", "# Datatype: MPI_CHAR.",
             f"{'# Size':<10s}{'Avg Latency(us)':>18s}{'Min Latency(us)':>18s}"
             f"{'Max Latency(us)':>18s}{'Iterations':>12s}"]
    lines += [f"{size:<10d}{avg:>18.2f}{avg * 0.8:>18.2f}{avg * 1.2:>18.2f}{1000:>12d}"
              for size, avg in sorted(latencies_us.items())]
    return "\n".join(lines) + "\n"


def nightly_osu(directory, levels_us, base=2.0):
    """One file a night, osu_allreduce-2024-03-DD.txt (the date in its name),
    64 KiB at `levels_us[i]`, 1 KiB at `base` every night. Returns the paths."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, level in enumerate(levels_us):
        path = directory / f"osu_allreduce-2024-03-{i + 1:02d}.txt"
        path.write_text(osu_allreduce_text({SIZES[0]: base, SIZES[1]: level}))
        paths.append(path)
    return paths
