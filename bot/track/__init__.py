"""Migration tracker: status per area, tracking-issue updates, history, dashboard."""
