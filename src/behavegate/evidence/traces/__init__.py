"""Trace evidence: OpenTelemetry trace files read into the same attempts as
observation files and the live adapter.

    files ──reader──▶ Span (one per span, any dialect) ──assemble──▶ spans of a trace
          ──normalize──▶ Trace (tool calls, model steps, final answer, usage)
          ──bind──▶ attempts per scenario (Observation), unbound traces listed

``reader`` streams (a file is never read whole), ``spans`` decodes the four
wire shapes into one ``Span``, ``messages`` reads the GenAI, OpenInference and
OpenLLMetry attribute dialects, ``normalize`` and ``bind`` are pure functions,
``load`` is the one entry point for commands.
"""
