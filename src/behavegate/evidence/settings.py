"""What a live run is given: its settings, and the shape of one request whatever answers it
(an endpoint over HTTP, or an in-process agent)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any

from behavegate.evidence.budgets import AttemptBudget, SpendLimit
from behavegate.evidence.judge_client import JudgeSettings
from behavegate.evidence.retry import RetryPolicy
from behavegate.evidence.simulated_user import AskUser
from behavegate.evidence.trust import Credentials, Endpoint
from behavegate.frozen import Frozen

if TYPE_CHECKING:
    from behavegate.evidence.answer_cache import AnswerCache

Send = Callable[[tuple[bytes, ...], float, int], Awaitable[tuple[Any, int]]]
"""One request of a conversation, whatever answers it: the JSON request body (in pieces),
the deadline (``time.monotonic``) and the most response bytes to accept → the parsed
response and its size in bytes. Raises EndpointError (ResponseTooLarge past the limit):
the attempt is then incomplete with that reason."""
Connect = Callable[[], AbstractAsyncContextManager[Send]]
"""Opens one attempt's connection, closed when the attempt ends (see :func:`live.http_connection`)."""


class LiveSettings(Frozen):
    endpoint: Endpoint | None  # None: an in-process agent answers (evidence/in_process.py)
    credentials: Credentials | None
    max_tokens: int
    max_seconds: float
    concurrency: int
    started: float  # time.monotonic() at the start of the run (the budget's origin)
    budget: AttemptBudget = AttemptBudget()
    judge: JudgeSettings | None = None  # response.judge checks are asked of this judge (evidence/judge_client.py)
    retry: RetryPolicy = RetryPolicy()  # --retries (version 2): what is sent again, and when
    spend: SpendLimit | None = None  # --max-total-tokens, --max-cost: the whole run's
    simulate: AskUser | None = None  # simulated_user: the judge's endpoint, asked for the user's next message
    mcp_listen: str | None = None  # agent.mcp.serve: the address the tool server binds (--mcp-listen; loopback by default)
    mcp_fixed: bool = False  # agent.mcp.url: fixed (the report's provenance says so)
    mcp_port: int = 0  # the port it binds (--mcp-port; 0: an ephemeral one); agent.mcp.url: fixed needs one
    cache: AnswerCache | None = None  # --cache DIR (authoring only): answers replayed from, and stored in, DIR
