#!/usr/bin/env bash
# Run the Action under a real local runner: .github/workflows/action-act.yml (the README's
# workflow usage, offline and live, with planted failures) through act over podman
# (../shared/checks/act/run.sh: a clone of HEAD, no registry, local base images), print
# act's log, then check with scripts/act_check.py each job's result, the Action's outputs,
# its annotations at the contract's lines and its job summary. The podman storage, layer
# cache and base images are shared with scripts/container-test.sh, so after it the
# Action's image is a cached rebuild. Takes about 9-10 minutes on 2 busy cores (562 s with four jobs).
set -uo pipefail
cd "$(dirname "$0")/.."
RUN=${ACT_RUNNER:-../shared/checks/act/run.sh}
BUILD=${CONTAINER_RUNNER:-../shared/checks/container/build-and-run.sh}
if [ ! -x "$RUN" ] || [ ! -x "$BUILD" ]; then
  echo "act-test: $RUN or $BUILD not found; skipped (GitHub runs the workflow's offline job as it is)"
  exit 0
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
start=$(date +%s)
# The live-service job's service image, as a registry would hold it (a cached rebuild after the first).
AGENT_IMAGE=localhost/behavegate-refund-agent:act
if ! "$BUILD" -q --build-only -t "$AGENT_IMAGE" --build-arg PYTHON_IMAGE=python:3.12-slim examples/refund-agent >"$log" 2>&1; then
  cat "$log"; echo "act-test: could not build $AGENT_IMAGE"; exit 1
fi
# The mcp-agent job's container: the framework agent's pinned environment (pip from PyPI at build
# time only; cached after the first build, which takes a few minutes).
MCP_AGENT_IMAGE=localhost/behavegate-mcp-agent:act
if ! "$BUILD" -q --build-only -t "$MCP_AGENT_IMAGE" --build-arg PYTHON_IMAGE=python:3.12-slim examples/mcp-framework-agent >"$log" 2>&1; then
  cat "$log"; echo "act-test: could not build $MCP_AGENT_IMAGE"; exit 1
fi
echo "act-test: running .github/workflows/action-act.yml with act (four jobs; the log follows)"
# live-regressed and mcp-agent need the action's container to share the job's network (act's does; GitHub's does not).
"$RUN" .github/workflows/action-act.yml --var ACTION_SHARES_JOB_NETWORK=true --var "REFUND_AGENT_IMAGE=$AGENT_IMAGE" \
  --var "MCP_AGENT_IMAGE=$MCP_AGENT_IMAGE" >"$log" 2>&1
code=$?
took=$(($(date +%s) - start))
# Prefixed: act prints job summaries unprefixed, and no line of it may start a workflow command here.
sed 's/^/  act| /' "$log"
echo "act-test: act exited $code after ${took}s; checking its log"
python3 scripts/act_check.py --act-exit "$code" "$log"
status=$?
[ $status = 0 ] && echo "act-test: all checks passed in ${took}s" || echo "act-test: FAILED"
exit $status
