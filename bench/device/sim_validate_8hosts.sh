#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/sim_validate.py at 8 emulated hosts as one script: check the machine,
# install what is missing, build, measure and simulate, write the JSON and the
# log, all within --limit seconds (default 600).
#
# 8 hosts want a core each for their ranks and as many again for the links'
# emulation (the kernel's packet work and the delay program), so the script
# refuses a machine with fewer than 16 cores. It runs as root, in the
# repository's root, on Debian 12 or alike (a kernel with network namespaces,
# tbf and NFQUEUE: a virtual machine or bare metal, not a container sandbox).
#
# What it installs, only where missing:
#   Debian packages: the DEBS list below;
#   Python packages: pyproject.toml's dependencies, into .venv, with mpiscope
#   itself (editable).
# From Debian's mirror and the Python package index, or, on a machine that
# reaches neither, from a directory made beforehand by --bundle DIR on a
# machine that reaches both (same Debian release and Python version) and
# carried along: --from DIR.
#
#   bash bench/device/sim_validate_8hosts.sh --dry-run          # print the steps
#   bash bench/device/sim_validate_8hosts.sh --out "$OUT"       # run
#   bash bench/device/sim_validate_8hosts.sh --bundle ~/bundle  # fill a bundle
#   bash bench/device/sim_validate_8hosts.sh --from ~/bundle --out "$OUT"
#
# Exit status: the bench's; 2 for bad options or a machine that cannot run it;
# 124 when the bench ran out of time.
set -euo pipefail

HOSTS=8
MIN_CORES=16
DEBS=(build-essential make openmpi-bin libopenmpi-dev python3 python3-venv python3-dev
      iproute2 iptables util-linux mount hostname libnetfilter-queue-dev)
PY_CHECK="import mpiscope, numpy, scipy, pyarrow, duckdb, rich, matplotlib, jinja2, pandas, shtab, otf2, ruptures"

out=${OUT:-build/sim-validate-8}
limit=600
presets=fast-ethernet,gige
from=""
bundle=""
dry_run=0
start=$SECONDS

usage() {
  sed -n '3,28p' "$0" | sed 's/^# \{0,1\}//'
  echo
  echo "options: --out DIR (default \$OUT, else build/sim-validate-8), --limit SECONDS (120-3600, default 600),"
  echo "         --presets LIST (default fast-ethernet,gige), --from DIR, --bundle DIR, --dry-run, --help"
}

bad() {
  echo "sim_validate_8hosts: $*" >&2
  exit 2
}

while (($#)); do
  case $1 in
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    --limit) limit=${2:?--limit needs seconds}; shift 2 ;;
    --presets) presets=${2:?--presets needs a list}; shift 2 ;;
    --from) from=${2:?--from needs a directory}; shift 2 ;;
    --bundle) bundle=${2:?--bundle needs a directory}; shift 2 ;;
    --dry-run) dry_run=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) bad "unknown option '$1' (see --help)" ;;
  esac
done

[[ $limit =~ ^[0-9]+$ ]] && ((limit >= 120 && limit <= 3600)) ||
  bad "--limit $limit: give whole seconds from 120 to 3600"
[[ $presets =~ ^[a-z0-9-]+(,[a-z0-9-]+)*$ ]] ||
  bad "--presets '$presets': cluster presets separated by commas (fast-ethernet, gige, two-switch)"
[[ -z $from || -d $from ]] || bad "--from $from: no such directory (make it with --bundle DIR)"
[[ -f pyproject.toml && -f bench/sim_validate.py ]] || bad "run it in mpiscope's repository root"

# Cores this process may use: its CPU affinity (nproc, without the OpenMP
# variables it also obeys), and a cgroup quota below that where there is one.
cores() {
  local n quota period
  n=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)
  if read -r quota period 2>/dev/null </sys/fs/cgroup/cpu.max && [[ $quota != max ]]; then
    n=$((quota / period < n ? (quota + period - 1) / period : n))
  fi
  echo "$n"
}

python_deps() {
  python3 -c 'import tomllib; print("\n".join(tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"]))'
}

if [[ -n $bundle ]]; then
  # On a machine that reaches Debian's mirror and the package index: every
  # Debian package the list needs (dependencies included) and every wheel.
  [[ $(id -u) -eq 0 ]] || bad "--bundle needs root (apt-get)"
  mkdir -p "$bundle/debs" "$bundle/wheels"
  apt-get update -qq
  mapfile -t closure < <(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts \
    --no-breaks --no-replaces --no-enhances "${DEBS[@]}" | grep '^[a-z0-9]' | sort -u)
  (cd "$bundle/debs" && apt-get download "${closure[@]}")
  python_deps | python3 -m pip download -q -d "$bundle/wheels" -r /dev/stdin 'setuptools>=77' wheel
  echo "bundle: $(ls "$bundle/debs" | wc -l) Debian packages, $(ls "$bundle/wheels" | wc -l) wheels in $bundle"
  exit 0
fi

n_cores=$(cores)
bench_cmd=(.venv/bin/python bench/sim_validate.py --hosts "$HOSTS" --presets "$presets" --models drawn,shaped
           --p2p pingpong --json "$out/sim-validate-8.json")

if ((dry_run)); then
  debs_from="Debian's mirror (apt-get install)" wheels_from="the Python package index" too_few=""
  [[ -z $from ]] || debs_from="$from/debs (dpkg -i)" wheels_from="$from/wheels (pip --no-index)"
  ((n_cores >= MIN_CORES)) || too_few=", too few: a run stops here with exit 2"
  cat <<EOF
steps (nothing is done with --dry-run):
  1. check: $MIN_CORES cores or more (this machine: $n_cores$too_few), root, the repository's root
  2. Debian packages missing among: ${DEBS[*]}
     from $debs_from
  3. .venv with pyproject.toml's dependencies and mpiscope (editable), unless it imports them already,
     from $wheels_from
  4. build: the engine for Open MPI (mpiscope build --mpi openmpi), native/cluster, native/sim
  5. run, stopped (SIGINT: the clusters are taken down) when $limit s since the start are spent:
     ${bench_cmd[*]}
  6. log: $out/sim-validate-8.log
EOF
  exit 0
fi

((n_cores >= MIN_CORES)) ||
  bad "$n_cores cores: $HOSTS emulated hosts need $MIN_CORES or more (a core per host for its rank and one for its link's emulation); run it on a larger machine"
[[ $(id -u) -eq 0 ]] || bad "needs root: emulated clusters are network namespaces (run it as root)"
mkdir -p "$out" || bad "--out $out: cannot make the directory"
log=$out/sim-validate-8.log
exec > >(tee -a "$log") 2>&1
step() { echo "[$((SECONDS - start)) s] $*"; }

step "machine: $n_cores cores, $(uname -r), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"

missing=()
for p in "${DEBS[@]}"; do
  [[ $(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true) == "install ok installed" ]] || missing+=("$p")
done
if ((${#missing[@]})); then
  step "Debian packages missing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  if [[ -n $from ]]; then
    compgen -G "$from/debs/*.deb" >/dev/null || bad "$from/debs holds no .deb (make it with --bundle DIR)"
    dpkg -i --skip-same-version "$from"/debs/*.deb >/dev/null
  else
    timeout 120 apt-get update -qq ||
      bad "cannot reach Debian's mirror to install ${missing[*]}: carry them with --bundle DIR / --from DIR"
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
fi

if ! .venv/bin/python -c "$PY_CHECK" 2>/dev/null; then
  step "Python packages into .venv"
  [[ -x .venv/bin/python ]] || python3 -m venv .venv
  if [[ -n $from ]]; then
    .venv/bin/pip install -q --no-index --find-links "$from/wheels" -e . ||
      bad "installing from $from/wheels failed: make the bundle with the Python version of this machine ($(python3 -V))"
  else
    .venv/bin/pip install -q -e . ||
      bad "cannot install the Python packages (pyproject.toml) from the package index: use --bundle DIR / --from DIR"
  fi
fi

step "build: engine (Open MPI), native/cluster, native/sim"
.venv/bin/python -m mpiscope.cli build --mpi openmpi >/dev/null
make -s -C native/cluster BUILD="$PWD/build/cluster"
make -s -C native/sim BUILD="$PWD/build/sim"

left=$((limit - (SECONDS - start) - 30))
((left >= 60)) || bad "only $left s left of --limit $limit for the bench after setting up; give a larger --limit"
step "bench, $left s at most: ${bench_cmd[*]}"
status=0
PYTHONUNBUFFERED=1 timeout -s INT -k 30 "$left" "${bench_cmd[@]}" || status=$?
if ((status == 124)); then
  step "the bench ran out of its $left s: give a larger --limit, or fewer --presets"
fi
step "done, exit $status; JSON: $out/sim-validate-8.json"
exit "$status"
