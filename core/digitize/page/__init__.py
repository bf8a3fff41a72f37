"""The page's structure in the canonical frame: the rotation at the boundary, the ink, the printed grid, the stretches of log body."""
