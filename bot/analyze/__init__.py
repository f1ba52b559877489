"""Analyzer: one module per rule family; pure functions from (path, source) to findings."""
