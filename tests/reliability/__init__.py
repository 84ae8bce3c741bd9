"""Reliability and security tests: faults, crashes, two processes, hostile input, secrets,
migrations (issue 6). Figures from the full run are in ``RESULTS.md``."""
