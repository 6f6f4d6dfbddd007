#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A root of another CPU's Debian 12 libraries for the cross builds and their
# runs under qemu-user (tests/cross/): Open MPI's headers and libraries, the
# delay program's netfilter libraries, and the C library, unpacked from the
# Debian packages of that architecture into build/cross/<arch>/sysroot.
# Through apt with a state of its own: Debian multiarch cannot install these
# beside the host's (an M-A: same library must have the host's exact version,
# and libopenmpi-dev needs the other architecture's openmpi-bin), and the
# host's package database stays as it was.
# usage: scripts/cross-sysroot.sh arm64|ppc64el ...   (quick when present)
set -euo pipefail
self=$(realpath "$0")
cd "$(dirname "$self")/.."

packages=(
  libc6 libc6-dev libgcc-s1 linux-libc-dev               # the C library (a root qemu-user runs in)
  libopenmpi-dev libopenmpi3 libpmix2 libhwloc15          # Open MPI 4.1: headers, libraries, components
  libevent-core-2.1-7 libevent-pthreads-2.1-7 zlib1g libudev1 libnuma1 libmunge2 libnl-3-200
  libnetfilter-queue-dev libnetfilter-queue1 libnfnetlink-dev libnfnetlink0 libmnl0  # native/cluster/delayd.c
)
stamp_text=$(sha256sum "$self" | cut -c1-16)  # this script changed: unpacked anew

for arch in "$@"; do
  case "$arch" in arm64|ppc64el) ;; *) echo "cross-sysroot: unknown architecture '$arch' (arm64 or ppc64el)" >&2; exit 2 ;; esac
  top=build/cross/$arch
  root=$top/sysroot
  [[ -f $root/.complete && "$(cat "$root/.complete")" == "$stamp_text" ]] && continue
  echo "setup: unpacking $arch's Open MPI and C library into $root"
  apt_dir=$PWD/$top/apt
  rm -rf "$root" "$apt_dir/debs"
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/debs" "$apt_dir/parts" "$root"
  : > "$apt_dir/status"
  echo "deb [arch=$arch signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main" \
    > "$apt_dir/sources.list"
  opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o "Dir::Etc::SourceParts=$apt_dir/parts"
        -o "Dir::Etc::PreferencesParts=$apt_dir/parts" -o "Dir::State::Lists=$apt_dir/lists"
        -o "Dir::State::status=$apt_dir/status" -o "Dir::Cache=$apt_dir/cache"
        -o "APT::Architecture=$arch" -o "APT::Architectures=$arch" -o Debug::NoLocking=1
        -o APT::Sandbox::User=root)
  apt-get "${opts[@]}" update -qq
  (cd "$apt_dir/debs" && apt-get "${opts[@]}" download -qq "${packages[@]}")
  for deb in "$apt_dir"/debs/*.deb; do dpkg-deb -x "$deb" "$root"; done
  rm -rf "$apt_dir"
  # Links that name an absolute path (/lib64/ld64.so.2 -> /lib/...) would
  # lead out of the root: made relative, inside it.
  find "$root" -type l -lname '/*' | while read -r link; do
    ln -sfnr "$root$(readlink "$link")" "$link"
  done
  echo "$stamp_text" > "$root/.complete"
done
