"""Reliability and security tests: faults, crashes, two processes, hostile input, secrets,
migrations. Figures from the full run are in ``RESULTS.md``."""
