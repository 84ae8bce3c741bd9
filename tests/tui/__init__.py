"""Tests of the Textual interface."""
