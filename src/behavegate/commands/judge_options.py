"""The judge's settings, in one place: the command line (``--judge-*``), the Action's
inputs, the Python API and the pytest plugin all fill a ``JudgeOptions``; the contract's
``judge:`` block fills what they leave unset; ``trusted_judge`` turns the result into
the judge a run may call, under the agent endpoint's trust rules."""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping
from typing import Any

from behavegate.errors import UsageError
from behavegate.frozen import Frozen
from behavegate.limits import (
    DEFAULT_JUDGE_MAX_REQUESTS,
    DEFAULT_JUDGE_MAX_TOKENS,
    DEFAULT_JUDGE_TIMEOUT_SECONDS,
    MAX_JUDGE_REQUESTS_CEILING,
    MAX_OUTPUT_TOKENS,
)
from behavegate.model import Contract


class JudgeOptions(Frozen):
    """What the person running chose for the judge (None: the contract's ``judge:`` block,
    then limits.py's default)."""

    endpoint: str | None = None
    model: str | None = None
    auth_env: str | None = None  # the judge's own token variable; never the contract's choice
    allow_remote: bool = False
    allow_contract_endpoint: bool = False
    timeout_seconds: float | None = None
    max_requests: int | None = None
    max_tokens: int | None = None

    def given(self) -> bool:
        """Was any judge option given (offline runs refuse them: they never ask a judge)?"""
        return any(getattr(self, name) not in (None, False) for name in self.__struct_fields__)


def validate_judge(options: JudgeOptions, *, offline: bool, version: int) -> None:
    if not options.given():
        return
    if version < 2:
        raise UsageError("--judge-* options need a version 2 contract (response.judge is a version-2 check)")
    if offline:
        raise UsageError(
            "--observations and --traces cannot be combined with judge options: an offline run never asks a judge, "
            "it reads the judge replies recorded with the observations"
        )
    endpoint = options.endpoint
    if endpoint is not None and (not endpoint.strip() or endpoint != endpoint.strip()):
        raise UsageError("--judge-endpoint must be a non-empty URL without surrounding whitespace")
    if options.model is not None and not options.model.strip():
        raise UsageError("--judge-model must not be empty")
    seconds = options.timeout_seconds
    if seconds is not None and (not math.isfinite(seconds) or not 0 < seconds <= 300):
        raise UsageError("--judge-timeout must be greater than 0 and at most 300 (seconds)")
    if options.max_requests is not None and not 1 <= options.max_requests <= MAX_JUDGE_REQUESTS_CEILING:
        raise UsageError(f"--judge-max-requests must be between 1 and {MAX_JUDGE_REQUESTS_CEILING}")
    if options.max_tokens is not None and not 1 <= options.max_tokens <= MAX_OUTPUT_TOKENS:
        raise UsageError(f"--judge-max-tokens must be between 1 and {MAX_OUTPUT_TOKENS}")


def needs_judge(contract: Contract) -> bool:
    """A judge check, or a simulated user (asked at the judge's endpoint)."""
    return any(s.expect.judge is not None or s.simulated_user is not None for s in contract.scenarios)


def trusted_judge(
    contract: Contract,
    options: JudgeOptions,
    allow_hosts: Iterable[str],
    environ: Mapping[str, str] | None = None,
    hidden: tuple[str, ...] = (),
) -> Any:
    """The judge a live run may call (``evidence.judge_client.JudgeSettings``), or None
    when no selected scenario asks for one. Raises before any request when the judge
    endpoint is not allowed (the same rules, in the same order, as the agent's).
    ``hidden``: the agent's token, masked (with the judge's own) in every question."""
    if not needs_judge(contract):
        return None
    from behavegate.evidence.judge_client import JudgeSettings
    from behavegate.evidence.trust import JUDGE, choose_endpoint, load_credentials, pin_allowed_host, system_resolver

    target = contract.judge
    credentials = load_credentials(options.auth_env, os.environ if environ is None else environ, "--judge-auth-env")
    model = options.model or target.model
    endpoint = choose_endpoint(
        target.endpoint,
        model,
        override=options.endpoint,
        allow_remote=options.allow_remote,
        allow_contract_endpoint=options.allow_contract_endpoint,
        authenticated=credentials is not None,
        allow_hosts=list(allow_hosts),
        role=JUDGE,
    )
    endpoint = pin_allowed_host(endpoint, system_resolver)
    assert model is not None
    return JudgeSettings(
        endpoint=endpoint,
        credentials=credentials,
        model=model,
        timeout_seconds=_first(options.timeout_seconds, target.timeout_seconds, DEFAULT_JUDGE_TIMEOUT_SECONDS),
        max_tokens=int(_first(options.max_tokens, target.max_tokens, DEFAULT_JUDGE_MAX_TOKENS)),
        max_requests=int(_first(options.max_requests, target.max_requests, DEFAULT_JUDGE_MAX_REQUESTS)),
        parameters=dict(target.parameters or {}),
        hidden=(*hidden, *((credentials.token,) if credentials else ())),
    )


def _first(*values: float | None) -> float:
    return next(value for value in values if value is not None)
