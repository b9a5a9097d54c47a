"""``python -m sagemem``."""

from .cli import run

run()
