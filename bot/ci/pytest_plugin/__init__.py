"""A folder holding only pytest plugins, so it can go on the test interpreter's path without shadowing
anything (the tested repository may have its own ``bot`` package)."""
