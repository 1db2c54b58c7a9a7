#!/usr/bin/env bash
# Run the Action under a real local runner: .github/workflows/action-act.yml (the README's
# workflow usage, offline and live, with planted failures) through act over podman
# (../shared/checks/act/run.sh: a clone of HEAD, no registry, local base images), print
# act's log, then check with scripts/act_check.py each job's result, the Action's outputs,
# its annotations at the contract's lines and its job summary. The podman storage, layer
# cache and base images are shared with scripts/container-test.sh, so after it the
# Action's image is a cached rebuild.
set -uo pipefail
cd "$(dirname "$0")/.."
RUN=${ACT_RUNNER:-../shared/checks/act/run.sh}
if [ ! -x "$RUN" ]; then
  echo "act-test: $RUN not found; skipped (the workflow runs on GitHub as it is)"
  exit 0
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
start=$(date +%s)
echo "act-test: running .github/workflows/action-act.yml with act (three jobs; the log follows)"
# The live jobs need the action's container to share the job's network (act does; GitHub does not).
"$RUN" .github/workflows/action-act.yml --var ACTION_SHARES_JOB_NETWORK=true >"$log" 2>&1
code=$?
took=$(($(date +%s) - start))
# Prefixed: act prints job summaries unprefixed, and no line of it may start a workflow command here.
sed 's/^/  act| /' "$log"
echo "act-test: act exited $code after ${took}s; checking its log"
python3 scripts/act_check.py --act-exit "$code" "$log"
status=$?
[ $status = 0 ] && echo "act-test: all checks passed in ${took}s" || echo "act-test: FAILED"
exit $status
