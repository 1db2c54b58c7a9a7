"""The judged run as a report: building it, digests, redaction, evidence artifacts and their replay."""
