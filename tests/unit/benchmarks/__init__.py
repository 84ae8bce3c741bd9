"""Tests of the benchmark harness and probes (benchmarks/)."""
