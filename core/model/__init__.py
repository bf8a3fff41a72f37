"""The network, its numerics (precision modes) and its model files."""
