#!/usr/bin/env bash
# The Action step's cost: cold (the image built from the Dockerfile, as `image: Dockerfile`
# makes every job do) against prebuilt (the published image only run, as a release's
# action.yml makes `uses: <owner>/behavegate@v1` do), and the image's size.
#
#   bench/bench_action_image.sh [RUNS]     (default 3 runs of each; the median is printed)
#
# Uses ../shared/checks/container/build-and-run.sh (podman; no Docker engine, no registry here).
# Cold = `podman build --no-cache` (every layer, `pip install` from the package index) + one run;
# the base image is the local stand-in, so the base pull a real runner also pays on a cold
# build is NOT in this number. Prebuilt = one run of the built image; a real runner pulls it
# first (its compressed size, printed below, is what crosses the network).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNNER=${CONTAINER_RUNNER:-../shared/checks/container/build-and-run.sh}
RUNS=${1:-3}
TAG=localhost/behavegate-action:bench
[ -x "$RUNNER" ] || { echo "bench_action_image: $RUNNER not found"; exit 2; }
"$RUNNER" -q --build-only -t "$TAG" --build-arg PYTHON_IMAGE=python:3.12-slim . >/dev/null  # the base stand-in made once
eval "$("$RUNNER" --print-env)"

ws=$(mktemp -d)
trap 'rm -rf "$ws"' EXIT
cp -r examples "$ws/"
run_step() {  # one Action step on captured evidence, as the runner starts it
  "$RUNNER" --no-build -t "$TAG" -w "$ws" -e INPUT_CONTRACT=examples/refund-agent/contract.yml \
    -e INPUT_OBSERVATIONS=examples/refund-agent/observations-good.json . >/dev/null 2>&1
}
build_image() { podman build -q --no-cache --build-arg PYTHON_IMAGE=python:3.12-slim -t "$TAG" . >/dev/null; }
seconds() { local t0 t1; t0=$(date +%s.%N); "$@"; t1=$(date +%s.%N); echo "$t1 - $t0" | bc; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

cold=() warm=()
for _ in $(seq "$RUNS"); do
  build=$(seconds build_image)
  step=$(seconds run_step)
  cold+=("$(echo "$build + $step" | bc)")
  warm+=("$(seconds run_step)")
done
size=$(podman image inspect --format '{{.Size}}' "$TAG")
packed=$(podman save "$TAG" | gzip -1 | wc -c)
cold_s=$(printf '%s\n' "${cold[@]}" | median)
warm_s=$(printf '%s\n' "${warm[@]}" | median)
printf 'Action step, median of %s, load %s\n' "$RUNS" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '  cold (build --no-cache + run): %6.1f s\n' "$cold_s"
printf '  prebuilt (run only):           %6.1f s   (%.1fx faster, before the pull)\n' "$warm_s" "$(echo "$cold_s / $warm_s" | bc -l)"
printf '  image size: %s MB unpacked, %s MB gzip-compressed (what a runner pulls)\n' \
  "$(echo "$size / 1000000" | bc)" "$(echo "$packed / 1000000" | bc)"
