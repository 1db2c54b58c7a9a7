"""Gathering evidence of what an agent did: observation files, the live Chat Completions adapter, its transport and endpoint trust."""
