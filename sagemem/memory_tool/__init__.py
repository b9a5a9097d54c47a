"""A backend for Anthropic's client-side memory tool (``memory_20250818``): its commands
mapped onto guarded sagemem operations over a memory folder. A room beside ``cli/``.

Offers ``MemoryToolHandler`` (``handler.py``): ``handle(tool_input) -> str``. The path
mapping is ``paths.py``'s, the checks of each parameter ``params.py``'s; the strings the
model reads, with their sources, are ``messages.py``'s; the text edits ``text.py``'s,
what ``view`` shows ``render.py``'s. What of a memory the model sees and may change (the
text it wrote, its frontmatter kept whole) is ``view.py``'s, and which memories have a
frontmatter block sagemem wrote for it ``generated.py``'s.
"""

from .handler import MemoryToolHandler

__all__ = ["MemoryToolHandler"]
