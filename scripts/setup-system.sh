#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Installs the Debian packages mpiscope needs, only those that are missing,
# so a second run takes a moment. Needs root (as on a fresh Debian 12 machine).
set -euo pipefail

packages=(
  build-essential make git          # C toolchain for the engine
  openmpi-bin libopenmpi-dev         # Open MPI 4.1 (default library)
  mpich libmpich-dev                 # MPICH 4.0
  ucx-utils                          # ucx_info: where MPICH ch4:ucx goes by rendezvous (app compare's what-if)
  python3 python3-venv python3-dev   # the analysis side
  iproute2 iptables util-linux mount # emulated clusters: namespaces, veths, tbf, loss/delay rules
  libnetfilter-queue-dev             # the emulated clusters' delay program (native/cluster/delayd.c)
  chromium chromium-driver           # the report test renders in a real browser
  zsh                                # the completion test loads the zsh script
  gdb                                # mpiscope tune sees which algorithm function Open MPI enters
  slurmctld slurmd slurm-client munge # the srun/sbatch tests start a one-machine Slurm
  lammps hpcc gfortran               # mpiscope profile's real applications (Open MPI builds) and Fortran check
  scalapack-mpi-test                 # mpiscope profile's MPICH application: ScaLAPACK's LU test driver (xdlu)
  mocassin mocassin-benchmarks       # bench/app_loop.py's MPICH application (its input: the HII40 benchmark)
  gcc-aarch64-linux-gnu gcc-powerpc64le-linux-gnu qemu-user-static  # tests/cross/: the other CPUs' builds
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done

if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "setup: missing Debian packages: ${missing[*]}; run as root or install them first" >&2
    exit 2
  fi
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # Start no service while installing (munge, slurmctld, slurmd): the tests start
  # their own, and slurmctld's start fails without a slurm.conf, failing the install.
  if [[ ! -e /usr/sbin/policy-rc.d ]]; then
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
    chmod +x /usr/sbin/policy-rc.d
    trap 'rm -f /usr/sbin/policy-rc.d' EXIT
  fi
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# aarch64's and ppc64le's Open MPI and C library for the cross builds (quick when present).
bash "$(dirname "$0")/cross-sysroot.sh" arm64 ppc64el
