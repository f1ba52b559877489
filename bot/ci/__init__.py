"""Label-triggered distributed CI: permission check, test selection, validated dispatch."""
