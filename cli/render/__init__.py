"""Renderers of a diagnose report, one format per module."""
