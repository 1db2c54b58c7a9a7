"""Run-level defaults and limits (no imports, so the CLI starts fast)."""

DEFAULT_MAX_SCENARIOS = 25
DEFAULT_MAX_SECONDS = 300.0
DEFAULT_MAX_TOKENS = 1024
DEFAULT_CONCURRENCY = 4
MAX_RUN_SECONDS = 3_600.0
MAX_OUTPUT_TOKENS = 32_768
# Search time for user-supplied regexes (response.matches / not_matches), shared by all
# the patterns of one scenario attempt: a backtracking pattern can take exponential time.
REGEX_BUDGET_MS = 250
