"""Output formats and the GitHub review poster."""
