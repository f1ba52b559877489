"""pg-bot: finds hand-rolled process-group guards and migrates them to ``pg_utils.is_parallel``."""

__version__ = "0.1.0"
