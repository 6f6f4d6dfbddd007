#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Builds mpiscope's C programs for another CPU with Debian's cross compiler,
# against that CPU's Open MPI (scripts/cross-sysroot.sh), into
# build/cross/<arch>/ from native/: clock/timer-check, sim/mpiscope-sim,
# engine/mpiscope-engine (with the transport lab), pmpi/libmpiscope-pmpi.so
# and cluster/ (the delay program, the yield library). make rebuilds only
# what changed. tests/cross/ runs them under qemu-user.
# usage: scripts/cross-build.sh arm64|ppc64el
set -euo pipefail
cd "$(dirname "$0")/.."

arch=${1:-}
case "$arch" in
  arm64) triplet=aarch64-linux-gnu ;;
  ppc64el) triplet=powerpc64le-linux-gnu ;;
  *) echo "cross-build: expected arm64 or ppc64el, got '$arch'" >&2; exit 2 ;;
esac
top=$PWD/build/cross/$arch
root=$top/sysroot
if ! command -v "$triplet-gcc" >/dev/null || [[ ! -f $root/.complete ]]; then
  echo "cross-build: gcc-$triplet or $arch's libraries are missing; run 'make setup'" >&2
  exit 2
fi

cc="$triplet-gcc --sysroot=$root"
ompi=$root/usr/lib/$triplet/openmpi
mkdir -p "$top/bin"
# Open MPI's compiler wrapper for that CPU: what its mpicc --showme says.
cat > "$top/bin/mpicc" <<WRAPPER
#!/bin/sh
case " \$* " in *" -c "*) exec $cc -I$ompi/include "\$@" ;; esac
exec $cc -I$ompi/include "\$@" -L$ompi/lib -lmpi
WRAPPER
chmod +x "$top/bin/mpicc"

# No debug information: these builds are compiled and run, never debugged
# (from the environment: each Makefile adds its own flags to it).
export CFLAGS=-O2
flags=(-j2 -s)
make "${flags[@]}" -C native/clock BUILD="$top/clock" CC="$cc"
make "${flags[@]}" -C native/sim BUILD="$top/sim" CC="$cc"
make "${flags[@]}" -C native/engine BUILD="$top/engine" MPICC="$top/bin/mpicc"
make "${flags[@]}" -C native/pmpi BUILD="$top/pmpi" MPICC="$top/bin/mpicc"
make "${flags[@]}" -C native/cluster BUILD="$top/cluster" CC="$cc"
