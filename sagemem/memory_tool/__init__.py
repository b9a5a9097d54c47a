"""A backend for Anthropic's client-side memory tool (``memory_20250818``): its commands
mapped onto guarded sagemem operations over a memory folder. A room beside ``cli/``."""
