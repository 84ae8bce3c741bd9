"""Tests of the outer helpers: config.py and files.py."""
