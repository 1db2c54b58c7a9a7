"""Orchestration, one module per command: what runs, in which order, with which budgets."""
