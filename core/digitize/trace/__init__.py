"""A curve's path through its evidence: the parameters, the path search, the joint tracer of same-style curves, crossings, wrap counts."""
