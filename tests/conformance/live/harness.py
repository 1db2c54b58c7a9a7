"""Shared by record.py (runs skylos) and tests/test_live_conformance.py (runs behavegate).

stdlib only.  A case directory holds ``contract.yml``, ``responses.json``, optional
``args.json`` (``{"args": [...], "env": {NAME: value-or-null}}``), optional extra
input files, and ``expected.json`` (written by record.py).

Placeholders, replaced in the arguments and in ``contract.yml`` at run time:
``{endpoint}`` (the canned server's chat URL), ``{host_port}`` (``127.0.0.1:PORT``)
and ``{dead_endpoint}`` (the chat URL on a port nothing listens on).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

CHAT_PATH = "/v1/chat/completions"
DEFAULT_ARGS = ["contract.yml", "--endpoint", "{endpoint}", "--format", "json", "--no-artifacts"]
NOT_COPIED = {"expected.json", "args.json", "responses.json"}
SUBSTITUTED = {"contract.yml"}
REQUEST_HEADERS = ("accept", "content-type", "authorization")
_ELAPSED = re.compile(r"budget exceeded: \d+(?:\.\d+)?s>")


def case_responses(case_dir: Path) -> dict[str, Any]:
    data = json.loads((case_dir / "responses.json").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def case_args_env(case_dir: Path) -> tuple[list[str], dict[str, str | None]]:
    args_file = case_dir / "args.json"
    if not args_file.exists():
        return list(DEFAULT_ARGS), {}
    data = json.loads(args_file.read_text(encoding="utf-8"))
    args = data.get("args", DEFAULT_ARGS)
    assert isinstance(args, list) and all(isinstance(a, str) for a in args), args_file
    env = data.get("env") or {}
    return list(args), dict(env)


def placeholders(base_url: str, dead_port: int) -> dict[str, str]:
    host_port = base_url.removeprefix("http://")
    return {
        "{endpoint}": base_url + CHAT_PATH,
        "{host_port}": host_port,
        "{dead_endpoint}": f"http://127.0.0.1:{dead_port}{CHAT_PATH}",
    }


def substitute(text: str, values: dict[str, str]) -> str:
    for key, value in values.items():
        text = text.replace(key, value)
    return text


def materialize(case_dir: Path, workdir: Path, values: dict[str, str]) -> tuple[list[str], dict[str, str | None]]:
    """Copy the case inputs into workdir (placeholders filled in); return (args, env)."""
    for item in sorted(case_dir.iterdir()):
        if item.name in NOT_COPIED:
            continue
        target = workdir / item.name
        if item.is_dir():
            shutil.copytree(item, target)
        elif item.name in SUBSTITUTED:
            target.write_text(substitute(item.read_text(encoding="utf-8"), values), encoding="utf-8")
        else:
            shutil.copyfile(item, target)
    args, env = case_args_env(case_dir)
    return [substitute(arg, values) for arg in args], env


def mask_timing(text: str) -> str:
    return _ELAPSED.sub("budget exceeded: <elapsed>s>", text)


def request_summary(log: list[dict[str, Any]]) -> tuple[list[Any], list[dict[str, Any]]]:
    bodies = [entry["body"] if entry["body"] is not None else {"<raw>": entry.get("raw")} for entry in log]
    meta = []
    for entry in log:
        headers = {name.lower(): value for name, value in entry["headers"]}
        item: dict[str, Any] = {"method": entry["method"], "path": entry["path"]}
        for name in REQUEST_HEADERS:
            item[name] = headers.get(name)
        meta.append(item)
    return bodies, meta


def summarize(exit_code: int, stdout: str, log: list[dict[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {"exit_code": exit_code}
    try:
        payload = json.loads(stdout)
    except ValueError:
        payload = None
    if not isinstance(payload, dict):
        result["argparse_error"] = True
    else:
        result["argparse_error"] = False
        if "error" in payload:
            result["error"] = mask_timing(str(payload["error"]))
        else:
            provenance = dict(payload.get("provenance") or {})
            provenance.pop("endpoint_fingerprint", None)
            result.update(
                status=payload["status"],
                mode=payload["mode"],
                summary=payload["summary"],
                coverage=payload["coverage"],
                scenarios=payload["scenarios"],
                provenance=provenance,
            )
    result["requests"], result["request_meta"] = request_summary(log)
    return result


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def order_free(summary: dict[str, Any]) -> dict[str, Any]:
    """The summary with the request lists sorted (live requests may run concurrently)."""
    result = dict(summary)
    for key in ("requests", "request_meta"):
        if key in result:
            result[key] = sorted(result[key], key=canonical)
    return result
