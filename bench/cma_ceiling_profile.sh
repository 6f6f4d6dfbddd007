#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Where process_vm_readv's time goes (the transport lab's cma target), by perf's
# cpu-clock sampling (no hardware counters needed; root or
# perf_event_paranoid <= 1 for kernel symbols): each variant of
# bench/cma_ceiling.c alone for a few seconds, its top kernel functions, and
# the share in _copy_to_iter (the copy itself) turned into the kernel copy's
# own speed. With the copy at that speed and nothing else, readv / memcpy
# could be at most (kernel copy GB/s) / (memcpy GB/s): the ceiling.
#
#   sh bench/cma_ceiling_profile.sh [SIZE_MIB]      (default 1)
set -e
size=${1:-1}
here=$(dirname "$0")
bin=$(mktemp -d)/cma_ceiling
gcc -O2 -pthread "$here/cma_ceiling.c" -o "$bin"
"$bin" "$size" | tee "$bin.table"
for v in "readv 1 iov" "readv THP both"; do
    perf record -q -e cpu-clock -F 5000 -o "$bin.data" -- "$bin" "$size" --loop "$v" 4 >/dev/null 2>&1
    echo "== $v: top functions (share of samples)"
    perf report -i "$bin.data" --no-children --sort sym --stdio 2>/dev/null | grep -v '^#' | grep -v '^$' | head -8
    share=$(perf report -i "$bin.data" --no-children --sort sym --stdio 2>/dev/null |
            awk '$3=="_copy_to_iter"{sub("%","",$1); print $1}')
    gbs=$(grep "^  $v  " "$bin.table" | sed 's/.*  \([0-9.]*\) GB\/s.*/\1/')
    memcpy=$(grep "^  memcpy  " "$bin.table" | sed 's/.*  \([0-9.]*\) GB\/s.*/\1/')
    awk -v s="$share" -v g="$gbs" -v m="$memcpy" -v v="$v" 'BEGIN {
        if (s == "" || g == "") { print "  (no _copy_to_iter samples: kernel symbols unreadable?)"; exit }
        k = g / (s / 100);
        printf "  %s: %.1f%% of the time in _copy_to_iter: the kernel copies at %.1f GB/s, memcpy %.1f GB/s: ceiling %.2f x memcpy\n", v, s, k, m, k / m }'
done
