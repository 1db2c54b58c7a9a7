#!/usr/bin/env bash
# act-show.sh [FILE...] - the last step of each job of .github/workflows/action-act.yml:
# prints the Action step's outcome and outputs (OUTCOME, OUTPUTS from the workflow) and the
# job summary it wrote, so that scripts/act-test.sh can check them in act's log (act keeps
# GITHUB_STEP_SUMMARY in the job container and shows it nowhere). Every line is prefixed
# with "act-show <what>| " so no line of the summary starts a workflow command.
set -u
echo "act-show outcome| ${OUTCOME:-}"
printf '%s\n' "${OUTPUTS:-}" | sed 's/^/act-show outputs| /'
for f in "$@"; do  # files a step wrote that the check wants to see exist
  if [ -s "$f" ]; then echo "act-show file| $f $(wc -c <"$f") bytes"; else echo "act-show file| $f missing"; fi
done
echo "act-show summary-path| ${GITHUB_STEP_SUMMARY:-}"
ls -la "$(dirname "${GITHUB_STEP_SUMMARY:-/nonexistent/x}")" 2>&1 | sed 's/^/act-show debug| /'
if [ -n "${GITHUB_STEP_SUMMARY:-}" ] && [ -s "$GITHUB_STEP_SUMMARY" ]; then
  sed 's/^/act-show summary| /' "$GITHUB_STEP_SUMMARY"
else
  echo "act-show summary| (empty)"
fi
