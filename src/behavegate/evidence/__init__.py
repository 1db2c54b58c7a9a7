"""Gathering evidence of what an agent did: observation files, recorded OpenTelemetry traces (traces/), the live Chat Completions adapter, its transport and endpoint trust."""
