#!/usr/bin/env bash
# Run a command as on a machine without the optional tools the tests use
# (Open MPI, Slurm, munge, the PMIx library): in a private mount namespace
# each such tool found on PATH and each of their libraries is covered by an
# empty file, so a test finds no tool and the loader cannot open the
# libraries. Nothing outside the command sees it. CI runs the tests once so
# (.ci/run) to prove they pass, skipping with the reason, where nothing
# optional is installed. Needs root and unshare (util-linux).
# Usage: scripts/without-optional.sh make test
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: $0 COMMAND [ARG...]" >&2; exit 2; }
if [ "${NVSHBENCH_WITHOUT_INNER:-}" != 1 ]; then
  if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null 2>&1; then
    echo "without-optional: needs root and unshare to hide the optional tools" >&2
    exit 2
  fi
  dir=$(mktemp -d)
  rc=0
  NVSHBENCH_WITHOUT_INNER=1 NVSHBENCH_WITHOUT_DIR=$dir unshare --mount --propagation private "$0" "$@" || rc=$?
  rmdir "$dir"
  exit $rc
fi
# The empty file lives on a tmpfs of this namespace alone: nothing is left.
mount -t tmpfs -o size=64k nvshbench-without "$NVSHBENCH_WITHOUT_DIR"
empty=$NVSHBENCH_WITHOUT_DIR/empty
: >"$empty"
chmod 0644 "$empty"
hidden=0
for t in mpirun mpiexec orterun prterun srun sbatch scancel salloc sinfo squeue scontrol slurmctld slurmd munged; do
  p=$(command -v "$t" 2>/dev/null) || continue
  mount --bind "$empty" "$(readlink -f "$p")"
  hidden=$((hidden + 1))
done
for pat in 'libmpi.so.*' 'libpmix.so.*' 'libopen-pal.so.*' 'libmunge.so.*'; do
  for f in $(ldconfig -p | awk -v p="$pat" '{print $NF}' | grep -E "/${pat//\*/.*}$" || true); do
    [ -e "$f" ] || continue
    mount --bind "$empty" "$(readlink -f "$f")"
    hidden=$((hidden + 1))
  done
done
echo "without-optional: hid $hidden tool(s) and librar(ies) of Open MPI, Slurm, munge and PMIx" >&2
"$@"
