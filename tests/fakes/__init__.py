"""Test doubles: the fake Anthropic server and its parts, sample files, oracles."""
