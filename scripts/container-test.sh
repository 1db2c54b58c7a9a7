#!/usr/bin/env bash
# Build the Action's image and run it the way the Actions runner runs a Docker
# action, on the refund-agent example (from its observation files and from its recorded
# traces); check exit codes, outputs (paths relative to the workspace), the job summary
# and its workspace copy, JUnit, annotations, evidence replay and file ownership.
# Uses ../shared/checks/container/build-and-run.sh (podman; this machine has no
# Docker engine). GitHub's own workflow
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
annotated() {  # level: the contract lines annotated at that level, sorted, on one line (reads $fc/log.txt)
  grep -o "^::$1 file=examples/refund-agent/contract.yml,line=[0-9]*" "$fc/log.txt" | cut -d= -f3 | sort -n | tr '\n' ' '
}

run_case() {  # name evidence expected-exit expected-status [working-directory] [evidence input: OBSERVATIONS|TRACES]
  local ws fc code wd=${5:-} input=${6:-OBSERVATIONS} other at=""
  other=$([ "$input" = TRACES ] && echo OBSERVATIONS || echo TRACES)
  ws=$(mktemp -d) fc=$(mktemp -d)
  cp -r examples "$ws/"
  chown -R 1234:1234 "$ws"
  local inputs=()
  if [ -z "$wd" ]; then
    # As the runner passes them: every input of action.yml, the unused evidence input empty.
    inputs=(-e INPUT_CONTRACT=examples/refund-agent/contract.yml -e "INPUT_$input=examples/refund-agent/$2" -e "INPUT_$other="
      -e INPUT_JUNIT=behavegate-junit.xml -e INPUT_SUMMARY=true -e INPUT_ANNOTATIONS=true
      -e INPUT_FAIL-ON=incomplete -e INPUT_WORKING-DIRECTORY=. -e INPUT_HTML=behavegate-report.html -e INPUT_SARIF=behavegate.sarif)
  else
    # Only what a workflow writes under `with:`, as `uses: docker://...` passes it
    # (no action.yml, so no defaults from the runner): the entrypoint supplies them.
    inputs=(-e INPUT_CONTRACT=contract.yml -e "INPUT_$input=$2" -e "INPUT_WORKING-DIRECTORY=$wd")
    at="$wd/"
  fi
  set +e
  "$RUNNER" --no-build -t "$TAG" -w "$ws" --file-commands "$fc" "${inputs[@]}" . >"$fc/log.txt" 2>&1
  code=$?
  set -e
  echo "$1: exit $code"
  sed 's/^/    | /' "$fc/log.txt" | tail -n 12
  check "exit code $3" "[ $code = $3 ]"
  check "output status=$4" "grep -qx 'status=$4' $fc/set_output_*"
  check "outputs report, junit, summary, run-dir relative to the workspace" "grep -qx 'report=${at}behavegate-report.json' $fc/set_output_* && grep -qx 'junit=${at}behavegate-junit.xml' $fc/set_output_* && grep -qx 'summary=${at}behavegate-summary.md' $fc/set_output_* && grep -q '^run-dir=${at}.behavegate/runs/' $fc/set_output_*"
  check "path outputs exist from the workspace root" "(for o in report junit summary run-dir; do [ -e \"$ws/\$(grep \"^\$o=\" $fc/set_output_* | cut -d= -f2)\" ] || exit 1; done)"
  check "job summary written" "grep -q '^## .* behavegate: $4' $fc/step_summary_*"
  check "summary file is the job summary" "cmp -s '$ws/${at}behavegate-summary.md' $fc/step_summary_*"
  check "JUnit written" "grep -q '<testsuite ' '$ws/${at}behavegate-junit.xml'"
  check "JUnit paths are repository-relative" "grep -q 'file=\"examples/refund-agent/contract.yml\"' '$ws/${at}behavegate-junit.xml'"
  check "files given back to the workspace owner" "[ \"\$(stat -c %u:%g '$ws/${at}behavegate-junit.xml')\" = 1234:1234 ] && [ \"\$(stat -c %u:%g '$ws/${at}behavegate-summary.md')\" = 1234:1234 ] && [ \"\$(stat -c %u '$ws/${at}.behavegate/runs')\" = 1234 ]"
  check "evidence replays" ".venv/bin/behavegate replay \"$ws/\$(grep '^run-dir=' $fc/set_output_* | cut -d= -f2)\" >/dev/null 2>&1 || python3 -m behavegate replay \"$ws/\$(grep '^run-dir=' $fc/set_output_* | cut -d= -f2)\" >/dev/null"
  if [ -z "$wd" ]; then
    check "HTML report written, self-contained, given back" "grep -q 'http-equiv=\"Content-Security-Policy\" content=\"default-src ' '$ws/behavegate-report.html' && grep -qx 'html=behavegate-report.html' $fc/set_output_* && [ \"\$(stat -c %u '$ws/behavegate-report.html')\" = 1234 ]"
    check "SARIF written" "grep -q '\"version\": \"2.1.0\"' '$ws/behavegate.sarif' && grep -qx 'sarif=behavegate.sarif' $fc/set_output_*"
    [ "$4" = pass ] || check "SARIF findings at repository-relative contract paths" "grep -q '\"uri\": \"examples/refund-agent/contract.yml\"' '$ws/behavegate.sarif'"
  fi
  if [ "$4" = fail ]; then
    check "annotations on contract lines" "grep -q '^::error file=examples/refund-agent/contract.yml,line=' '$fc/log.txt'"
  fi
  if [ "$input" = TRACES ]; then
    # A trace records no refusal and no sources: those two assertions are incomplete, the violations still fail.
    check "report names the trace file as its evidence" "grep -q '\"trace_file\"' '$ws/${at}behavegate-report.json' && grep -q 'examples/refund-agent/$2' '$ws/${at}behavegate-report.json'"
    check "outputs failed=2 incomplete=2 (scenarios)" "grep -qx 'failed=2' $fc/set_output_* && grep -qx 'incomplete=2' $fc/set_output_*"
    check "error annotations on the violated lines (70, 71, 82, 84), warnings on refusal and sources (64, 92)" "[ \"\$(annotated error)\" = '70 71 82 84 ' ] && [ \"\$(annotated warning)\" = '64 92 ' ]"
    check "job summary: evidence recorded_trace, the traces bound, refusal and sources incomplete" "grep -q 'evidence \`recorded_trace\`' $fc/step_summary_* && grep -q '5 bound to the selected scenarios' $fc/step_summary_* && grep -q '\`sources.required\\[0\\]\` (line 64): \`explicit source evidence was not observed: OpenTelemetry traces do not record it\`' $fc/step_summary_* && grep -q '\`refusal\` (line 92): \`explicit refusal evidence was not observed: OpenTelemetry traces do not record it\`' $fc/step_summary_*"
  fi
  rm -rf "$ws" "$fc"
}

run_case "good evidence" observations-good.json 0 pass
run_case "regressed evidence" observations-regressed.json 1 fail
run_case "regressed evidence, working-directory, with: inputs only" observations-regressed.json 1 fail examples/refund-agent
run_case "regressed recorded traces" traces/regressed.jsonl 1 fail "" TRACES
[ $fail = 0 ] && echo "container-test: all checks passed" || { echo "container-test: FAILED"; exit 1; }
