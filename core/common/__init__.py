"""The vocabulary every layer shares: errors, typed events, atomic writes, progress."""
