"""Where each curve may be, per pixel: the network read in windows, a hand-painted mask, the classical ink, the curves' inks."""
