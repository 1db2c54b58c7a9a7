"""Judging evidence: the assertion registry, evaluation, aggregation of attempts, matching, trajectories, argument schemas, safety scorers."""
