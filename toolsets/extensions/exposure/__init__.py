"""Progressive tool exposure: the loader tools and tool search."""
