"""Reporters: pure functions from finished metrics to text, JSON, CSV (and later Markdown, HTML)."""
