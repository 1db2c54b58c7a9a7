"""Run-level defaults and limits (no imports, so the CLI starts fast)."""

DEFAULT_MAX_SCENARIOS = 25
DEFAULT_MAX_SECONDS = 300.0
DEFAULT_MAX_TOKENS = 1024
DEFAULT_CONCURRENCY = 4
MAX_RUN_SECONDS = 3_600.0
MAX_OUTPUT_TOKENS = 32_768

# Budgets for one attempt, all its turns together (version-2 multi-turn: the
# history is re-sent every turn, so per-response caps alone let a conversation
# grow with max_turns). A run holds at most --concurrency attempts at a time,
# so its memory is bounded by concurrency × these byte budgets.
ATTEMPT_MAX_REQUEST_BYTES = 8 * 1024 * 1024  # every request body sent, summed
ATTEMPT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024  # every response body read (decoded), summed
# A spend rail, not a cost policy (that is expect.usage.max_total_tokens): well
# above an honest 20-turn conversation with a 32k-token context (640k), and
# below what the request budget alone lets through (~2M tokens of text).
ATTEMPT_MAX_TOKENS = 1_000_000  # usage.total_tokens reported by the endpoint, summed

# Search time for user-supplied regexes (response.matches / not_matches), shared by all
# the patterns of one scenario attempt: a backtracking pattern can take exponential time.
REGEX_BUDGET_MS = 250
# The same for the `pattern` / `patternProperties` regexes of declared tool schemas, shared
# by every call checked by one attempt's tools.arguments_valid (they search agent arguments).
ARGUMENT_REGEX_BUDGET_MS = 250
