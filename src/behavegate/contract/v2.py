"""Version-2 contract keys, read by the same reader as version 1 and never changing what a version-1
contract means: each method reads one block's keys from a raw mapping and returns the extra model
fields; problems go to the shared collector with their YAML path and line."""

from __future__ import annotations

from typing import Any

from behavegate.contract import rules as f
from behavegate.contract import v2_conversation as conversation
from behavegate.contract import v2_http, v2_mcp
from behavegate.contract import v2_run as run
from behavegate.contract.checks import PII_DETECTORS, SEQUENCE_MODES, added_keys
from behavegate.contract.v2_judge import JUDGE_TARGET_KEYS, judge_spec, judge_target
from behavegate.contract.v2_values import (
    choice,
    non_negative_int,
    pattern,
    phone_region,
    positive_int,
    positive_number,
    price,
    rate,
)
from behavegate.conversation import ToolField
from behavegate.judged import JudgeTarget
from behavegate.limits import MAX_RUNS, MAX_TURNS
from behavegate.model import CallCount, Expectation, Gates, Pricing, RequiredCall, TrajectorySpec

GATES = ("rate", "lower_bound")
THRESHOLD_MODES = ("average", "all")  # a suite floor on the average, or on every included file
MESSAGE_ROLES = ("system", "user", "assistant", "tool")
RESERVED_PARAMETERS = ("model", "messages", "tools", "stream")
MISSING_TOOL_CALLS = ("unobserved", "none")
# agent.api: Chat Completions, the OpenAI Responses API, or an MCP server as the target (each scenario's ``call``)
WIRE_APIS = ("chat", "responses", "mcp")
PRICING_KEYS = ("input_per_mtok", "output_per_mtok")

V2_KEYS = {
    "top": ("defaults", "gates", "include", "judge"),
    "agent": ("parameters", "missing_tool_calls", "stream", "api", "pricing", "http", "mcp", "tools_from"),
    "scenario": (
        "messages",
        "tags",
        "runs",
        "min_pass_rate",
        "gate",
        "tool_results",
        "state",
        "turns",
        "simulated_user",
        "max_turns",
        "canaries",
        "parameters",
        "sequential",
        "call",
    ),
    # expect's own keys, from the check rows
    **{block: added_keys(block, 2) for block in ("expect", "response", "tools")},
}
SAFETY_KEYS = added_keys("safety", 2)
DEFAULT_KEYS = ("runs", "min_pass_rate", "gate", "max_turns", "sequential")
GATE_KEYS = ("min_pass_rate", "threshold_mode", "latency_p95_ms", "by_tag", "min_score")


# (expect block, key, Expectation field, check) of the single-limit expectations
MEASURES = (
    ("steps", "max", "max_steps", positive_int),
    ("latency", "max_ms", "max_latency_ms", positive_number),
    ("usage", "max_total_tokens", "max_total_tokens", positive_int),
    ("turns", "max", "max_model_turns", lambda v, p, ln: positive_int(v, p, ln, high=MAX_TURNS)),
)


class V2Fields:
    """Mixed into the contract reader; uses its collector and line map."""

    c: f.Collector
    lines: Any
    # ``uses_tool_result`` items of the scenario being read that parsed, even when others did
    # not: their grounding is checked with the scenario's other problems.
    grounding: list[tuple[int, ToolField, int | None]]

    def unknown(self, raw: dict[str, Any], allowed: tuple[str, ...], prefix: str) -> None:
        raise NotImplementedError

    def names(self, raw: dict[str, Any], key: str, path: str, check: Any = f.tool_name) -> tuple[str, ...] | None:
        raise NotImplementedError

    def required_call(self, value: Any, path: str, line: int | None) -> RequiredCall | None:
        raise NotImplementedError

    def expectation(
        self, raw: dict[str, Any], path: str, availability: set[str] | None, at: dict[str, int]
    ) -> Expectation | None:
        raise NotImplementedError

    def _take(self, check: Any, raw: dict[str, Any], key: str, path: str, *extra: Any) -> Any:
        if key not in raw:
            return None
        return self.c.take(check, raw[key], f"{path}.{key}", self.lines.of_key(raw, key), *extra)

    def _block(self, raw: dict[str, Any], key: str, path: str, allowed: tuple[str, ...]) -> dict[str, Any] | None:
        where = f"{path}.{key}" if path else key
        block = self.c.take(f.mapping, raw.get(key), where, self.lines.of_key(raw, key))
        if block is not None:
            self.unknown(block, allowed, where)
        return block

    # -- top level -------------------------------------------------------------

    def defaults(self, raw: dict[str, Any]) -> dict[str, Any]:
        block = self._block(raw, "defaults", "", DEFAULT_KEYS) if "defaults" in raw else None
        return self.run_settings(block or {}, "defaults")

    def run_settings(self, raw: dict[str, Any], path: str) -> dict[str, Any]:
        found = {
            "runs": self._take(lambda v, p, ln: positive_int(v, p, ln, high=MAX_RUNS), raw, "runs", path),
            "min_pass_rate": self._take(rate, raw, "min_pass_rate", path),
            "gate": self._take(lambda v, p, ln: choice(v, p, ln, GATES), raw, "gate", path),
            "max_turns": self._take(lambda v, p, ln: positive_int(v, p, ln, high=MAX_TURNS), raw, "max_turns", path),
            "sequential": self._take(lambda v, p, ln: run.sequential(v, p, ln, self.lines.of_key), raw, "sequential", path),
        }
        return {key: value for key, value in found.items() if value is not None}

    def gates(self, raw: dict[str, Any]) -> Gates:
        block = self._block(raw, "gates", "", GATE_KEYS) if "gates" in raw else None
        if not block:
            return Gates()
        mode = self._take(lambda v, p, ln: choice(v, p, ln, THRESHOLD_MODES), block, "threshold_mode", "gates")
        lines: dict[str, int] = {
            key: line
            for key in ("min_pass_rate", "latency_p95_ms", "min_score")
            if key in block and (line := self.lines.of_key(block, key))
        }
        tags = block.get("by_tag")
        if isinstance(tags, dict):
            for tag, spec in tags.items():
                for key in spec if isinstance(spec, dict) else ():
                    line = self.lines.of_key(spec, key) or self.lines.of_key(tags, tag)
                    if line:
                        lines[f"tag[{tag}].{key}"] = line
        return Gates(
            min_pass_rate=self._take(rate, block, "min_pass_rate", "gates"),
            threshold_mode=mode or "average",
            latency_p95_ms=self._take(positive_number, block, "latency_p95_ms", "gates"),
            min_score=self._take(rate, block, "min_score", "gates"),
            by_tag=self._take(lambda v, p, ln: run.tag_gates(v, p, ln, self.lines.of_key), block, "by_tag", "gates") or (),
            lines=lines,
        )

    def judge_target(self, raw: dict[str, Any]) -> JudgeTarget:
        block = self._block(raw, "judge", "", JUDGE_TARGET_KEYS) if "judge" in raw else None
        return judge_target(self.c, block or {}, self.lines.of_key)

    # -- agent ---------------------------------------------------------------------

    def parameters(self, raw: dict[str, Any], path: str) -> dict[str, Any] | None:
        """Extra request-body keys, passed through verbatim; never the request's own."""
        line = self.lines.of_key(raw, "parameters")
        params = self.c.take(f.json_mapping, raw["parameters"], f"{path}.parameters", line)
        if params is not None:
            reserved = sorted(set(params) & set(RESERVED_PARAMETERS))
            if reserved:
                self.c.add(f"{path}.parameters cannot set {reserved}", f"{path}.parameters", line)
        return params

    def agent_extras(self, raw: dict[str, Any]) -> dict[str, Any]:
        extras: dict[str, Any] = {}
        if "parameters" in raw:
            params = self.parameters(raw, "agent")
            if params is not None:
                extras["parameters"] = params
        missing = self._take(lambda v, p, ln: choice(v, p, ln, MISSING_TOOL_CALLS), raw, "missing_tool_calls", "agent")
        if missing is not None:
            extras["missing_tool_calls"] = missing
        stream = self._take(f.boolean, raw, "stream", "agent")
        api = self._take(lambda v, p, ln: choice(v, p, ln, WIRE_APIS), raw, "api", "agent")
        pricing = self.pricing(raw) if "pricing" in raw else None
        http = v2_http.http_mapping(self.c, raw, self.lines.of_key) if "http" in raw else None
        found = (("stream", stream), ("api", api), ("pricing", pricing), ("http", http))
        extras.update({k: v for k, v in found if v is not None})
        extras.update((v2_mcp.extras(self.c, raw, self.lines.of_key) if "mcp" in raw else None) or {})
        if "tools_from" in raw and (url := v2_mcp.tools_from(self.c, raw, self.lines.of_key)) is not None:
            extras["tools_from_mcp"] = url
        if api == "responses" and stream:  # a Responses stream is a different event format: refused, never misread
            message = "agent.stream is for api: chat; the Responses API is read unstreamed"
            self.c.add(message, "agent.stream", self.lines.of_key(raw, "stream"))
        for key in ("http", "stream", "mcp") if api == "mcp" else ():  # an MCP server as the target is called directly
            if key in raw:
                self.c.add(
                    f"agent.{key} is not for api: mcp (the endpoint is the MCP server under test)",
                    f"agent.{key}",
                    self.lines.of_key(raw, key),
                )
        return extras

    def pricing(self, raw: dict[str, Any]) -> Pricing | None:
        """``agent.pricing``: USD per million input and output tokens, both required."""
        block = self._block(raw, "pricing", "agent", PRICING_KEYS)
        if block is None:
            return None
        prices = {key: self._take(price, block, key, "agent.pricing") for key in PRICING_KEYS}
        for key in (key for key in PRICING_KEYS if key not in block):
            self.c.add(f"agent.pricing.{key} is required", f"agent.pricing.{key}", self.lines.of_key(raw, "pricing"))
        return None if any(value is None for value in prices.values()) else Pricing(**prices)

    # -- scenario --------------------------------------------------------------------

    def messages(self, raw: dict[str, Any], path: str, history_only: bool = False) -> tuple[dict[str, Any], ...] | None:
        """``messages``; ``history_only``: what comes before scripted ``turns`` (any last role)."""
        items = self.c.take(f.listing, raw.get("messages"), f"{path}.messages", self.lines.of_key(raw, "messages"), required=True)
        if items is None:
            return None
        if not items:
            self.c.add(
                f"{path}.messages must contain at least one message", f"{path}.messages", self.lines.of_key(raw, "messages")
            )
            return None
        found: list[dict[str, Any]] = []
        for index, item in enumerate(items):
            item_path = f"{path}.messages[{index}]"
            line = self.lines.of_item(items, index)
            message = self.c.take(f.mapping, item, item_path, line, required=True)
            if message is None:
                continue
            self.unknown(message, ("role", "content", "name", "tool_call_id"), item_path)
            role = self._take(lambda v, p, ln: choice(v, p, ln, MESSAGE_ROLES), message, "role", item_path)
            if "role" not in message:
                self.c.add(f"{item_path}.role is required", f"{item_path}.role", line)
            content = self.c.take(
                f.required_text, message, "content", f"{item_path}.content", self.lines.of_key(message, "content") or line
            )
            extra = {k: self._take(f.text, message, k, item_path) for k in ("name", "tool_call_id") if k in message}
            if role is not None and content is not None:
                found.append({"role": role, "content": content, **{k: v for k, v in extra.items() if v is not None}})
        if found and found[-1]["role"] != "user" and found[-1]["role"] != "tool" and not history_only:
            self.c.add(
                f"{path}.messages must end with a user or tool message", f"{path}.messages", self.lines.of_key(raw, "messages")
            )
        return tuple(found)

    def scenario_extras(self, raw: dict[str, Any], path: str, defaults: dict[str, Any]) -> dict[str, Any]:
        extras: dict[str, Any] = {**defaults, **self.run_settings(raw, path)}
        if extras.get("sequential") is False:  # `sequential: false` turns a default off
            extras["sequential"] = None
        tags = self.names(raw, "tags", f"{path}.tags", f.safe_id) if "tags" in raw else None
        if tags:
            extras["tags"] = tags
        if "parameters" in raw:
            params = self.parameters(raw, path)
            if params is not None:
                extras["parameters"] = params
        canaries = self.names(raw, "canaries", f"{path}.canaries", f.text) if "canaries" in raw else None
        if canaries:
            extras["canaries"] = canaries
        state = conversation.scenario_state(self.c, raw, path, self.lines) if "state" in raw else None
        if state is not None:
            extras["state"] = state
        if isinstance(raw.get("tool_results"), list):
            rules = conversation.tool_rules(self.c, raw["tool_results"], f"{path}.tool_results", self.lines, state)
            if rules is not None:
                extras["tool_rules"] = rules
        elif "tool_results" in raw:
            results = self.c.take(
                f.json_mapping, raw["tool_results"], f"{path}.tool_results", self.lines.of_key(raw, "tool_results")
            )
            if results is not None:
                for name in results:
                    self.c.take(f.tool_name, name, f"{path}.tool_results.{name}", self.lines.of_key(results, name))
                extras["tool_results"] = results
        return extras

    # -- expectations ------------------------------------------------------------------

    def response_extras(self, raw: dict[str, Any], path: str, at: dict[str, int]) -> dict[str, Any]:
        extras: dict[str, Any] = {}
        for key, check in (("icontains", f.text), ("matches", pattern), ("not_matches", pattern)):
            if key in raw:
                values = self.names(raw, key, f"{path}.{key}", check)
                extras[key] = values or ()
                for i in range(len(values or ())):
                    at[f"response.{key}[{i}]"] = self.lines.of_item(raw[key], i) or 0
        if "judge" in raw:
            spec = judge_spec(self.c, raw["judge"], f"{path}.judge", self.lines.of_key(raw, "judge"), self.lines.of_key)
            if spec is not None:
                extras["judge"] = spec
            at["response.judge"] = self.lines.of_key(raw, "judge") or 0
        if "uses_tool_result" in raw:
            fields = conversation.tool_fields(self.c, raw, f"{path}.uses_tool_result", self.lines, self.grounding)
            extras["uses_tool_result"] = fields or ()
            for i in range(len(fields or ())):
                at[f"response.uses_tool_result[{i}]"] = self.lines.of_item(raw["uses_tool_result"], i) or 0
        return extras

    def tools_extras(self, raw: dict[str, Any], path: str, at: dict[str, int]) -> dict[str, Any]:
        extras: dict[str, Any] = {}
        line = self.lines.of_key
        if "min_calls" in raw:
            extras["min_calls"] = self._take(non_negative_int, raw, "min_calls", path)
        if "calls" in raw:
            block = self.c.take(f.mapping, raw["calls"], f"{path}.calls", line(raw, "calls"))
            counts: list[CallCount] = []
            for name, spec in (block or {}).items():
                item_path = f"{path}.calls.{name}"
                if self.c.take(f.tool_name, name, item_path, line(block, name)) is None:
                    continue
                bounds = self.c.take(f.mapping, spec, item_path, line(block, name), required=True)
                if bounds is None:
                    continue
                self.unknown(bounds, ("min", "max"), item_path)
                low = self._take(non_negative_int, bounds, "min", item_path)
                high = self._take(non_negative_int, bounds, "max", item_path)
                if low is None and high is None:
                    self.c.add(f"{item_path} needs min or max", item_path, line(block, name))
                elif low is not None and high is not None and low > high:
                    self.c.add(f"{item_path}.min cannot exceed max", item_path, line(block, name))
                counts.append(CallCount(name, low, high))
                at[f"tools.calls.{name}"] = line(block, name) or 0
            extras["calls"] = tuple(counts)
        if "sequence" in raw:
            extras["sequence"] = self.sequence(raw, path)
            at["tools.sequence"] = line(raw, "sequence") or 0
        if "set" in raw:
            extras["tool_set"] = self.names(raw, "set", f"{path}.set")
            at["tools.set"] = line(raw, "set") or 0
        for key in ("arguments_valid", "known_only", "no_errors", "no_repeat"):
            if key in raw:
                extras[key] = self._take(f.boolean, raw, key, path)
                at[f"tools.{key}"] = line(raw, key) or 0
        if "min_calls" in raw:
            at["tools.min_calls"] = line(raw, "min_calls") or 0
        return extras

    def sequence(self, raw: dict[str, Any], path: str) -> TrajectorySpec | None:
        block = self._block(raw, "sequence", path, ("mode", "calls"))
        if block is None:
            return None
        seq_path = f"{path}.sequence"
        mode = self._take(lambda v, p, ln: choice(v, p, ln, SEQUENCE_MODES), block, "mode", seq_path)
        if "mode" not in block:
            self.c.add(f"{seq_path}.mode is required", f"{seq_path}.mode", self.lines.of_key(raw, "sequence"))
        items = self.c.take(f.listing, block.get("calls"), f"{seq_path}.calls", self.lines.of_key(block, "calls"), required=True)
        calls = []
        for index, item in enumerate(items or ()):
            call = self.required_call(item, f"{seq_path}.calls[{index}]", self.lines.of_item(items, index))
            if call is not None:
                calls.append(call)
        if mode is None or items is None:
            return None
        return TrajectorySpec(mode, tuple(calls))

    def pii_regions(self, block: dict[str, Any], path: str) -> tuple[str, ...]:
        """Where national-form phone numbers are looked for: region codes libphonenumber knows."""
        line = self.lines.of_key(block, "pii_regions")
        regions = self.names(block, "pii_regions", f"{path}.pii_regions", phone_region) or ()
        if block["pii_regions"] == []:
            self.c.add(f"{path}.pii_regions must name at least one region", f"{path}.pii_regions", line)
        if "phone" not in (block.get("pii") or ()):
            self.c.add(f"{path}.pii_regions applies to the phone detector: add phone to {path}.pii", f"{path}.pii_regions", line)
        repeated = f.duplicates(regions)
        if repeated:
            self.c.add(f"Duplicate {path}.pii_regions: {repeated}", f"{path}.pii_regions", line)
        return regions

    def expect_extras(self, raw: dict[str, Any], path: str, at: dict[str, int]) -> dict[str, Any]:
        extras: dict[str, Any] = {}
        line = self.lines.of_key
        for block_key, key, field, check in MEASURES:
            if block_key in raw:
                block = self._block(raw, block_key, path, (key,))
                if block is not None and key in block:
                    extras[field] = self._take(check, block, key, f"{path}.{block_key}")
                    at[f"{block_key}.{key}"] = line(block, key) or 0
        if "safety" in raw:
            block = self._block(raw, "safety", path, SAFETY_KEYS)
            if block is not None and "pii" in block:
                detectors = self.names(block, "pii", f"{path}.safety.pii", lambda v, p, ln: choice(v, p, ln, PII_DETECTORS))
                extras["pii"] = detectors or ()
                for i in range(len(detectors or ())):
                    at[f"safety.pii[{i}]"] = self.lines.of_item(block["pii"], i) or 0
            if block is not None and "pii_regions" in block:
                extras["pii_regions"] = self.pii_regions(block, f"{path}.safety")
            if block is not None and "injection" in block:
                extras["injection"] = self._take(f.boolean, block, "injection", f"{path}.safety")
                at["safety.injection"] = line(block, "injection") or 0
        return extras
