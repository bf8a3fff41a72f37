"""From a scan (or a mask) to curves: grid, evidence, tracing, crossing curves, scores."""
