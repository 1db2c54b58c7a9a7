"""Every limit and default behavegate applies, in one table (no imports, so the
CLI starts fast). Hitting a limit is always reported, never silent.

Version-1 input limits are skylos 5.1.2's own, and must stay equal to them.
"""

# --- a run (command-line defaults and their ceilings) --------------------------------
DEFAULT_MAX_SCENARIOS = 25
MAX_RUN_SCENARIOS = 1_000  # --max-scenarios ceiling, and the contract's scenario cap
DEFAULT_MAX_SECONDS = 300.0
MAX_RUN_SECONDS = 3_600.0
DEFAULT_MAX_TOKENS = 1024  # max_tokens sent to the endpoint
MAX_OUTPUT_TOKENS = 32_768
DEFAULT_CONCURRENCY = 4
MAX_RUN_TOKENS = 1_000_000_000_000  # --max-total-tokens ceiling: the whole run's reported tokens
MAX_RUN_COST = 1_000_000.0  # --max-cost ceiling (USD)
MAX_PRICE_PER_MTOK = 100_000.0  # agent.pricing ceiling (USD per million tokens): a typo guard
# The largest count or measure read from evidence (tokens, steps, latency in ms): far above any
# real run, and small enough that every sum and product over a run stays a finite float (magnitude.py).
MAX_EVIDENCE_QUANTITY = 10**15
MAX_RETRIES = 10  # --retries ceiling (version 2): retries of one request
RETRY_FIRST_WAIT = 0.5  # seconds before the first retry; doubled before each next one
RETRY_MAX_WAIT = 8.0  # seconds: the longest backoff (a longer Retry-After is still honoured)
MAX_CONCURRENCY = 64

# --- contracts and observation files (skylos's caps) ----------------------------------
MAX_CONTRACT_BYTES = 256 * 1024
MAX_OBSERVATION_BYTES = 2 * 1024 * 1024
INPUT_MAX_DEPTH = 32  # nesting of a contract or observation document
TOOL_RESULT_MAX_DEPTH = 16  # a filled-in tool result or state value, an MCP call's arguments (observation files: 32)
INPUT_MAX_VALUES = 20_000  # keys, values and list indexes counted as skylos counts them
INPUT_MAX_TEXT = 100_000  # characters in one string
MAX_TOOLS = 1_000  # agent.tools
MAX_TIMEOUT_SECONDS = 300  # agent.timeout_seconds (and the judge's): at most this, and more than 0
MAX_ASSERTIONS = 250  # per version-1 contract
OBSERVATION_MAX_TOOL_CALLS = 250
OBSERVATION_MAX_SOURCES = 1_000
MAX_RUNS = 100  # version 2: runs per scenario
MAX_TURNS = 20  # version 2: requests in one multi-turn attempt
MAX_JUDGE_VOTES = 9  # response.judge votes: judge requests for one check of one attempt
DEFAULT_JUDGE_MAX_REQUESTS = 200  # judge requests in one run (--judge-max-requests, judge.max_requests)
MAX_JUDGE_REQUESTS_CEILING = 100_000
DEFAULT_JUDGE_MAX_TOKENS = 512  # max_tokens sent with each judge request
DEFAULT_JUDGE_TIMEOUT_SECONDS = 60.0  # each judge request

# --- version 2: sized for real suites (version 1 keeps skylos's caps above, exactly) -------------
# docs/limits.md states this table to users; tests/test_limits.py holds the two equal.
V2_MAX_INPUT_BYTES = 64 * 1024 * 1024  # a contract, an included file, an observation file
V2_INPUT_MAX_VALUES = 10_000_000  # keys, values and list indexes of one such file
V2_MAX_SCENARIOS = 100_000  # scenarios of a contract (includes included); --max-scenarios' ceiling
V2_MAX_ASSERTIONS = 250_000  # assertions of a contract; --max-assertions raises it
MAX_ASSERTIONS_CEILING = 10_000_000  # the most --max-assertions may allow
V2_MAX_OBSERVATION_ENTRIES = 2_000_000  # entries (attempts) of a version-2 observation file
DATASET_MAX_PROBLEMS = 50  # problems reported from one golden set (CSV, JSONL) before reading stops
V2_MAX_REPORT_BYTES = 1024 * 1024 * 1024  # the JSON report of a version-2 run

# --- sharding (--shard K/N, behavegate merge) -------------------------------------------
MAX_SHARDS = 256  # N of --shard K/N: a GitHub Actions matrix runs at most 256 jobs
CARRIED_MAX_BYTES = 256 * 1024 * 1024  # the contract as data in a shard report, as written; past it the merge loads the YAML
# One shard report: the report cap, plus its behavegate block (the carried contract and the rest).
SHARD_REPORT_MAX_BYTES = V2_MAX_REPORT_BYTES + CARRIED_MAX_BYTES + 2_000_000
SHARD_REQUEST_COST = 10  # a pair's expected cost: this per request it may send (max_turns), plus one per assertion

# --- one endpoint response ---------------------------------------------------------------
MAX_RESPONSE_BYTES = 2 * 1024 * 1024
RESPONSE_MAX_DEPTH = 64
RESPONSE_MAX_VALUES = 50_000
RESPONSE_MAX_TOOL_CALLS = 250
RESPONSE_MAX_SOURCES = 1_000
RESPONSE_MAX_TEXT = 200_000
RESPONSE_MAX_SOURCE_TEXT = 100_000
RESPONSE_MAX_FINISH_REASON = 64
STREAM_MAX_CHUNKS = 50_000  # events in one streamed response (a 32,768-token answer, one token each, fits)
# Pieces one response body arrives in (HTTP chunks, or reads): h11 spends ~10 µs on each, so a
# body of 1-byte chunks would cost 3-4 s of CPU before the byte cap; twice the events above, each its own chunk.
RESPONSE_MAX_PIECES = 2 * STREAM_MAX_CHUNKS
# A connection's first request waits until the connection is this old (s): what its server sent on
# accept, before any request, has arrived by then and is refused as unsolicited (spares are older).
FIRST_REQUEST_SETTLE = 0.005
MAX_TOKEN_CHARS = 8_192  # a bearer token read from --auth-env

# --- the scripted MCP tool server of a live run (agent.mcp, evidence/mcp_server.py) --------------
MCP_MAX_CALLS = RESPONSE_MAX_TOOL_CALLS  # tools/call recorded for one attempt; past it refused, evidence incomplete
MCP_MAX_REQUESTS = 4 * MCP_MAX_CALLS  # HTTP requests on one attempt's path (calls, listings, handshakes); then 429
MCP_MAX_REQUEST_BYTES = 1024 * 1024  # one request body; larger: 413 before it is parsed
MCP_MAX_ATTEMPT_BYTES = 8 * 1024 * 1024  # one attempt's call arguments and results, summed; past it refused, evidence incomplete
MCP_MAX_CONNECTIONS = 64  # open at once; more: 503
MCP_REQUEST_SECONDS = 30.0  # one request, read and answered; a slower one is cut
MCP_HEADER_SECONDS = 5.0  # a request's headers, from connecting or starting it; slower: the connection is closed

# --- one attempt, all its turns together (version-2 multi-turn) ---------------------------
# The history is re-sent every turn, so per-response caps alone let a conversation
# grow with max_turns. A run holds at most --concurrency attempts at a time, so its
# memory is bounded by concurrency × these byte budgets.
ATTEMPT_MAX_REQUEST_BYTES = 8 * 1024 * 1024  # every request body sent, summed
ATTEMPT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024  # every response body read (decoded), summed
# A spend rail, not a cost policy (that is expect.usage.max_total_tokens): well
# above an honest 20-turn conversation with a 32k-token context (640k), and
# below what the request budget alone lets through (~2M tokens of text).
ATTEMPT_MAX_TOKENS = 1_000_000  # usage.total_tokens reported by the endpoint, summed
# Search time for user-supplied regexes (response.matches / not_matches), shared by all
# the patterns of one scenario attempt: a backtracking pattern can take exponential time.
REGEX_BUDGET_MS = 250
# A contract pattern's counted repeats may multiply to this many steps: the regex engine
# unrolls them when it compiles (26 characters can otherwise allocate a gigabyte).
PATTERN_MAX_EXPANSION = 100_000
# The same for the `pattern` / `patternProperties` regexes of declared tool schemas, shared
# by every call checked by one attempt's tools.arguments_valid (they search agent arguments).
ARGUMENT_REGEX_BUDGET_MS = 250
# safety.pii phone: libphonenumber parses (about 60 µs each) one text may cost; a candidate in
# national form costs one per region, a repeated candidate nothing. Past it the phone scan of
# that text stops and its verdict is incomplete (or fails on what was already found).
PHONE_PARSE_BUDGET = 2_500

# --- reports and evidence artifacts --------------------------------------------------------
MAX_REPORT_BYTES = 5_000_000  # the JSON report (skylos's cap)
REPORT_MAX_NESTING = 64  # inputs nest at most 32 deep; the report adds a few levels
REPORT_RESERVE_BYTES = 16 * 1024  # room, at the size check, for what is added after it
MAX_RUN_DECISIONS = 100_000_000  # assertion checks a run directory may record (every attempt's)
# --baseline: a JSON report, skylos's keys (at most V2_MAX_REPORT_BYTES) plus our `behavegate` block
MAX_BASELINE_BYTES = V2_MAX_REPORT_BYTES + 2_000_000
BASELINE_MAX_LISTED = 500  # findings of one kind listed in the JSON report (the rest counted)
BASELINE_MAX_PROBLEMS = 20  # problems reported from one invalid baseline report

# --- what CI shows ---------------------------------------------------------------------------
SUMMARY_MAX_BYTES = 1_000_000  # GitHub refuses step summaries over 1 MiB (1,048,576 bytes)
SUMMARY_ITEM_CHARS = 300  # one value shown in the summary
ANNOTATIONS_PER_LEVEL = 10  # GitHub shows 10 error and 10 warning annotations a step
ANNOTATION_MAX_MESSAGE = 4_000  # the runner cuts messages at 4,096 characters
JUNIT_MAX_MESSAGE = 4_000
JUNIT_MAX_OUTPUT = 64_000
CONSOLE_MAX_PROBLEMS = 50  # problems of a refused run listed on the console (the JSON error lists every one)
TABLE_ROWS_LISTED = 50  # a larger run's table lists only the scenarios that did not pass (--verbose: all)
LOOPS_SHOWN = 10  # possible-loop attempts listed in the table and the summary (the JSON has them all)
SHOWN_CALL_CHARS = 200  # a tool call quoted in a reason (repeated, unmatched): its arguments are the agent's
SHOWN_REPEATS = 5  # repeated calls named in one reason (the rest counted)
SHOWN_POSITIONS = 10  # positions of one repeated call named (the rest counted)
HTML_TEXT_CHARS = 4_000  # one agent answer shown in the HTML report (the JSON report has it whole)
HTML_VALUE_CHARS = 1_000  # one expected/observed value or tool-call argument text in the HTML report
HTML_TOOL_CALLS = 50  # tool calls listed per attempt in the HTML report
HTML_AGENT_TEXT_BUDGET = 4_000_000  # agent and assertion text in one HTML report; past it, left out and counted
SARIF_MAX_RESULTS = 5_000  # findings in one SARIF file (code scanning shows the top 5,000 of a run)
SARIF_MESSAGE_CHARS = 2_000  # one finding's message
GITHUB_COMMENT_MAX_CHARS = 65_536  # GitHub refuses issue and pull-request comments longer than this
PR_COMMENT_PAGES = 30  # pages of 100 comments read to find the sticky comment
PR_COMMENT_TIMEOUT_SECONDS = 10.0  # each GitHub REST call of the sticky comment, whole: connect, send, every byte read
PR_COMMENT_TOTAL_SECONDS = 60.0  # all of them together (listing up to 30 pages, then one edit or post)
# One GitHub REST reply: a page of 100 comments at 65,536 characters of 3-byte UTF-8 each is 19.7 MB.
PR_COMMENT_REPLY_MAX_BYTES = 32 * 1024 * 1024

# --- behavegate view (report/runs.py, report/run_diff.py, render/view.py, commands/view.py) ---------
VIEW_RUNS_LISTED = 200  # the newest run directories listed and checked; older ones are counted
VIEW_EVIDENCE_SCENARIOS = 100  # scenarios shown with their evidence on one page; past this, counted (compare: findings only)
VIEW_ATTEMPTS_SHOWN = 3  # attempts of one side of a scenario shown with their evidence; the rest counted
VIEW_CALLS_SHOWN = 12  # tool calls of one attempt listed; the rest counted
VIEW_REQUEST_SECONDS = 10.0  # a connection that sends nothing for this long is closed

# --- trace files (evidence/traces) ------------------------------------------------------------
TRACE_READ_CHUNK = 1024 * 1024  # bytes read at a time: memory is this plus the value being decoded
TRACE_MAX_OBJECT_BYTES = 64 * 1024 * 1024  # one JSON line, console object or span
TRACE_MAX_CONTAINERS = 2_000_000  # JSON objects and arrays in one of them (~60 bytes each once decoded)
TRACE_MAX_PROBLEMS = 20  # problems collected from one file before reading stops
TRACE_MAX_FILES = 10_000  # files under a --traces directory
TRACE_MAX_SPANS = 5_000_000  # GenAI spans held while traces are assembled (all files of a run)
TRACE_MAX_TRACES = 1_000_000  # traces with GenAI content a run may hold
TRACE_MAX_LINKS = 20_000_000  # spans without GenAI content, held as parent links (~150 bytes each)
TRACE_MAX_CALLS = 10_000  # tool calls of one trace; beyond, its tool evidence is incomplete
TRACE_MAX_TEXT = 200_000  # characters kept of one answer, argument or result text
