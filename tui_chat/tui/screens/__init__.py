"""Screens and modals, imported lazily when first shown."""
