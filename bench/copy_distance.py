# SPDX-License-Identifier: BSD-3-Clause
"""How long the C library's memmove, and the kernel's cross-memory-attach
copy (process_vm_readv, the single copy of Open MPI's shared-memory
transport), take to copy a buffer, by how far the destination lies past
its source within a 4 KiB page: the distance that
decides whether a benchmark's buffers and an MPI library's temporary ones
copy at full speed. On some processors (the `rep movsb` copy of AMD's Zen
cores) a destination 1-31 bytes past its source, modulo 4 KiB, copies many
times slower; IMB's buffers start wherever MPI_Alloc_mem puts them, so the
time of its large reductions depends on where they land (see the page
Reproducing OSU and IMB). No MPI is started.

Source and destination are separate page-aligned buffers; each copy starts
64 bytes into the source and 64 + distance bytes into the destination. Each
distance is copied --repeats times in turns with the others, both ways;
the table gives the least time per copy, in microseconds, and its ratio to
distance 0.

To reproduce (a second or two):

    .venv/bin/python bench/copy_distance.py --json docs/validation/copy-distance.json
"""

import ctypes
import ctypes.util
import os
import sys
import time

import benchjson

DISTANCES = (0, 1, 8, 16, 24, 31, 32, 48, 64, 2048, 4095)
PAGE = 4096


def page_aligned(n):
    """A buffer of n bytes at a page boundary, touched, and the object holding it."""
    raw = ctypes.create_string_buffer(n + 2 * PAGE)
    address = (ctypes.addressof(raw) + PAGE - 1) // PAGE * PAGE
    ctypes.memset(address, 1, n + PAGE)
    return raw, address


class IoVec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


LIBC = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)


def cma_copy(dst, src, size):
    """process_vm_readv from this process into itself: the kernel's copy."""
    local, remote = IoVec(dst, size), IoVec(src, size)
    if LIBC.process_vm_readv(os.getpid(), ctypes.byref(local), 1, ctypes.byref(remote), 1, 0) != size:
        sys.exit(f"process_vm_readv failed: {os.strerror(ctypes.get_errno())}")


def least_times(size, repeats):
    """{(way, distance): the least seconds one copy of `size` bytes took}."""
    keep_src, src = page_aligned(size + PAGE)
    keep_dst, dst = page_aligned(size + 2 * PAGE)
    ways = {"memmove": lambda d, s: ctypes.memmove(d, s, size), "process_vm_readv": lambda d, s: cma_copy(d, s, size)}
    best = {(w, d): float("inf") for w in ways for d in DISTANCES}
    for _ in range(repeats):
        for w, copy in ways.items():
            for d in DISTANCES:
                t0 = time.perf_counter()
                copy(dst + 64 + d, src + 64)
                best[w, d] = min(best[w, d], time.perf_counter() - t0)
    del keep_src, keep_dst
    return best


def main(argv=None):
    ap = benchjson.parser(__doc__)
    ap.add_argument(
        "--sizes", default="65536,262144,1048576,4194304", help="bytes per copy, comma-separated (default %(default)s)"
    )
    ap.add_argument("--repeats", type=int, default=200, help="copies per distance and size (default %(default)s)")
    args = ap.parse_args(argv)
    try:
        sizes = [int(s) for s in args.sizes.split(",")]
    except ValueError:
        ap.error(f"--sizes {args.sizes!r}: give byte counts separated by commas, e.g. 65536,262144")
    if args.repeats < 1 or any(s < 1 for s in sizes):
        ap.error("--repeats and every size must be at least 1")
    benchjson.check_json_path(ap, args)
    rows, results = [], []
    for size in sizes:
        best = least_times(size, args.repeats)
        for d in DISTANCES:
            m, c = best["memmove", d], best["process_vm_readv", d]
            rows.append(
                [
                    size,
                    d,
                    round(m * 1e6, 2),
                    round(m / best["memmove", 0], 2),
                    round(c * 1e6, 2),
                    round(c / best["process_vm_readv", 0], 2),
                ]
            )
            results.append({"size": size, "distance": d, "memmove_s": m, "process_vm_readv_s": c})
    t = benchjson.show(
        "A copy by the destination's distance past its source within a page (least over the repeats)",
        ["bytes", "distance (B)", "memmove us", "x distance 0", "process_vm_readv us", "x distance 0"],
        rows,
        ["distance: (destination - source) modulo 4096 bytes"],
    )
    benchjson.write(args, "copy_distance", [t], {"copies": results})


if __name__ == "__main__":
    sys.exit(main())
