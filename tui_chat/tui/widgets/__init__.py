"""Widgets of the main screen, one concept per module."""
