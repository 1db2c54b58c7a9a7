#!/usr/bin/env bash
# Build the Action's image and run it the way the Actions runner runs a Docker
# action, on the refund-agent example; check exit codes, outputs, the job summary,
# JUnit and file ownership. Uses ../shared/checks/container/build-and-run.sh
# (podman; this machine has no Docker engine). GitHub's own workflow
# (.github/workflows/self-test.yml, job "container") does the same with docker.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNNER=${CONTAINER_RUNNER:-../shared/checks/container/build-and-run.sh}
if [ ! -x "$RUNNER" ]; then
  echo "container-test: $RUNNER not found; skipped (GitHub runs the same check with docker)"
  exit 0
fi
TAG=localhost/behavegate-action:test
# The digest-pinned base cannot be pulled here: build on the local stand-in.
"$RUNNER" -q --build-only -t "$TAG" --build-arg PYTHON_IMAGE=python:3.12-slim .

fail=0
check() { if eval "$2"; then echo "  ok: $1"; else echo "  FAILED: $1"; fail=1; fi; }

run_case() {  # name observations expected-exit expected-status
  local ws fc code
  ws=$(mktemp -d) fc=$(mktemp -d)
  cp -r examples "$ws/"
  chown -R 1234:1234 "$ws"
  set +e
  "$RUNNER" --no-build -t "$TAG" -w "$ws" --file-commands "$fc" \
    -e INPUT_CONTRACT=examples/refund-agent/contract.yml \
    -e "INPUT_OBSERVATIONS=examples/refund-agent/$2" \
    -e INPUT_JUNIT=behavegate-junit.xml -e INPUT_SUMMARY=true -e INPUT_ANNOTATIONS=true \
    -e INPUT_FAIL-ON=incomplete -e INPUT_WORKING-DIRECTORY=. . >"$fc/log.txt" 2>&1
  code=$?
  set -e
  echo "$1: exit $code"
  sed 's/^/    | /' "$fc/log.txt" | tail -n 12
  check "exit code $3" "[ $code = $3 ]"
  check "output status=$4" "grep -qx 'status=$4' $fc/set_output_*"
  check "outputs report, junit, run-dir" "grep -qx 'report=behavegate-report.json' $fc/set_output_* && grep -qx 'junit=behavegate-junit.xml' $fc/set_output_* && grep -q '^run-dir=.behavegate/runs/' $fc/set_output_*"
  check "job summary written" "grep -q '^## .* behavegate: $4' $fc/step_summary_*"
  check "JUnit written" "grep -q '<testsuite ' '$ws/behavegate-junit.xml'"
  check "JUnit paths are repository-relative" "grep -q 'file=\"examples/refund-agent/contract.yml\"' '$ws/behavegate-junit.xml'"
  check "files given back to the workspace owner" "[ \"\$(stat -c %u:%g '$ws/behavegate-junit.xml')\" = 1234:1234 ] && [ \"\$(stat -c %u '$ws/.behavegate/runs')\" = 1234 ]"
  check "evidence replays" ".venv/bin/behavegate replay \"$ws/\$(grep '^run-dir=' $fc/set_output_* | cut -d= -f2)\" >/dev/null 2>&1 || python3 -m behavegate replay \"$ws/\$(grep '^run-dir=' $fc/set_output_* | cut -d= -f2)\" >/dev/null"
  if [ "$4" = fail ]; then
    check "annotations on contract lines" "grep -q '^::error file=examples/refund-agent/contract.yml,line=' '$fc/log.txt'"
  fi
  rm -rf "$ws" "$fc"
}

run_case "good evidence" observations-good.json 0 pass
run_case "regressed evidence" observations-regressed.json 1 fail
[ $fail = 0 ] && echo "container-test: all checks passed" || { echo "container-test: FAILED"; exit 1; }
