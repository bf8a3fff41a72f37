"""The precision modes a user may ask for, apart from ``precision.py`` (which imports PyTorch): the command line
lists them in its help without loading PyTorch."""

MODES = ("auto", "fp32", "bf16", "fp16")  # every mode a user may ask for: the one list of them
