import sys

from .launch import console

sys.exit(console())
