"""``python -m sagemem``: the same first step as the ``sagemem`` script."""

from .launch import main

main()
