"""Where the model that ships with the app lies (no torch import: the GUI names it before it loads one)."""

from pathlib import Path

# the demo's model, the app's model on first start and the default base for adapting; never overwritten
BUNDLED_MODEL = Path(__file__).resolve().parents[2] / "resources" / "models" / "demo.safetensors"
