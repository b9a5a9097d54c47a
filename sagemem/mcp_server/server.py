"""The MCP server over the memory layers: tools, resources, and long-lived stores.

Built on the official SDK's ``MCPServer``. Every call into the store runs on one
thread (``StoreThread``): the index and vectors are SQLite connections, which stay on
the thread that opened them, and one writer at a time is what the store expects anyway.
The process stays up, so the index is followed by a watcher (a query with nothing
changed skips the stat pass) and the embedder stays loaded; both are released when the
server stops. A folder that disappears makes each tool return an error result naming
it; when the folder comes back, the watcher is started again. The global layer's
folder, when there is one (``layered.py``), is followed the same way on the same
thread, and has resources of its own under ``sagemem://global/``.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import inspect
from collections.abc import AsyncIterator, Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from typing import Any, TypeVar
from urllib.parse import quote

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import CallToolResult, Resource, TextContent, ToolAnnotations

from .. import __version__
from ..config import Settings
from ..errors import SagememError
from ..files.controls import visible
from ..layers import GLOBAL, PROJECT, Layers
from ..serve.server import start_listener
from ..store import MemoryStore
from . import outputs
from .address import allowed_hosts
from .aliases import ArgumentAliases
from .arguments import check_text
from .stdio import serve_stdio
from .tools import MemoryTools

T = TypeVar("T")
INDEX_URI = "sagemem://MEMORY.md"
MEMORY_URI = "sagemem://memories/{name}"
GLOBAL_INDEX_URI = "sagemem://global/MEMORY.md"
GLOBAL_MEMORY_URI = "sagemem://global/memories/{name}"
INSTRUCTIONS = (
    "Long-term memory kept as Markdown files. Call search_memory before answering from "
    "memory or asking the user something they may have told you; read_memory for a whole "
    "memory. Save what should outlast this conversation with create_memory: saving a "
    "title again updates that memory, and a close title writes nothing and names the "
    "memory to update instead (distinct=true saves a new one). A write refused because "
    "the file changed is a normal result: re-read, merge, write again with the new "
    "revision. Results marked layer global are the user's habits for every project: "
    "save one there (layer: \"global\") only when it holds in every project.")

RENDER: Mapping[str, Callable[[Any], str]] = {
    "search_memory": outputs.search_text, "read_memory": outputs.read_text,
    "search_transcripts": outputs.transcripts_text,
    "write_memory": outputs.write_text, "set_memory_fields": outputs.write_text,
    "create_memory": outputs.write_text, "archive_memory": outputs.archive_text,
    "list_memories": outputs.list_text, "list_conflicts": outputs.conflicts_text,
    "record_use": outputs.use_text, "audit": outputs.audit_text,
    "dream_plan": outputs.dream_brief_text, "dream_apply": outputs.dream_text,
}


class StoreThread:
    """One worker thread for everything that touches the store."""

    def __init__(self) -> None:
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sagemem-store")

    async def run(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, functools.partial(fn, *args, **kwargs))

    def shutdown(self) -> None:
        self._executor.shutdown(wait=True)


class SagememMCP(MCPServer[None]):
    """``MCPServer`` whose resource list also names each memory as it is now."""

    def __init__(self, layers: Layers, *, watch: bool = True,
                 session_id: str | None = None, settings: Settings | None = None) -> None:
        self.layers, self.store, self.watch = layers, layers.project, watch
        self.thread = StoreThread()
        self.memory_tools = MemoryTools(layers, session_id, settings)
        self.served = self.memory_tools.served
        tools = self.memory_tools.tools()
        super().__init__(
            "sagemem", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING",
            lifespan=_lifespan,
            middleware=[ArgumentAliases({t.__name__: _parameters(t) for t in tools},
                                        self.store.directory)])
        for tool in tools:
            self.add_tool(self._tool(tool), annotations=_annotations(tool))
        self._add_resources()

    def _tool(self, method: Callable[..., Any]) -> Callable[..., Any]:
        """The method as the SDK calls it: on the store thread, its result as structured
        content plus the text the model reads, a library error as an error result."""
        render = RENDER[method.__name__]

        @functools.wraps(method)  # the SDK reads the parameters and the return type here
        async def call(**kwargs: Any) -> CallToolResult:
            try:
                check_text(kwargs)
                result = await self.thread.run(self._fresh, method, kwargs)
            except SagememError as exc:
                return CallToolResult(content=[_text(f"error: {visible(str(exc))}")],
                                      is_error=True)
            return CallToolResult(content=[_text(render(result))],
                                  structured_content=dataclasses.asdict(result))
        return call

    def _fresh(self, method: Callable[..., T], kwargs: Mapping[str, Any]) -> T:
        """Call ``method`` on the store thread, first restarting a watcher that stopped
        (its folder went away and is back) or starting one for a global layer made since."""
        self.served.refresh()
        if self.watch:
            self.served.watch()
        return method(**kwargs)

    def _add_resources(self) -> None:
        @self.resource(INDEX_URI, name="MEMORY.md", mime_type="text/markdown",
                       description="The index of the memories: one line per memory.")
        async def index() -> str:
            return await self._read_resource(lambda: self._index_text(PROJECT))

        @self.resource(MEMORY_URI, name="memory", mime_type="text/markdown",
                       description="One memory's whole file, frontmatter included.")
        async def memory(name: str) -> str:
            return await self._read_resource(lambda: self._whole_file(PROJECT, name))

        @self.resource(GLOBAL_INDEX_URI, name="global/MEMORY.md", mime_type="text/markdown",
                       description="The global layer's index: habits for every project.")
        async def global_index() -> str:
            return await self._read_resource(lambda: self._index_text(GLOBAL))

        @self.resource(GLOBAL_MEMORY_URI, name="global memory", mime_type="text/markdown",
                       description="One global memory's whole file, frontmatter included.")
        async def global_memory(name: str) -> str:
            return await self._read_resource(lambda: self._whole_file(GLOBAL, name))

    def _whole_file(self, layer: str, name: str) -> str:
        """A memory's whole file, which the model has then seen whole (``views.py``)."""
        memory = self.served.store(layer).get(name)
        self.served.views(layer).whole(memory.file, memory.revision)
        return memory.text

    def _index_text(self, layer: str) -> str:
        """MEMORY.md, or the starter text when there is none yet; but a folder that is
        gone (or a global layer there is none of) is an error, not an empty index."""
        store = self.served.store(layer)
        store.require_directory()
        return store.read_index()[0]

    async def _read_resource(self, read: Callable[[], str]) -> str:
        """The file's text with its control characters written out, as every tool shows
        a memory: a client may print a resource, and ``ESC[2J`` must not clear a screen."""
        try:
            return visible(await self.thread.run(read))
        except SagememError as exc:
            raise ResourceError(visible(str(exc))) from None

    async def list_resources(self) -> list[Resource]:
        """The indexes, then each memory of each layer; the global index only while
        there is a global layer."""
        listed = [r for r in await super().list_resources()
                  if self.layers.global_ is not None or str(r.uri) != GLOBAL_INDEX_URI]
        for layer, store in self.layers.stores():
            try:
                listing = await self.thread.run(store.list, include_archived=False)
            except SagememError:
                continue  # no folder: the index resource still says so when read
            listed += [Resource(uri=memory_uri(m.file, layer), name=m.file, title=m.title,
                                description=visible(m.description),
                                mime_type="text/markdown", size=m.size)
                       for m in listing.memories]
        return listed

    # -- start and stop ------------------------------------------------------------------

    def start(self) -> None:
        """On the store thread: follow each folder (the indexes open on first use)."""
        if self.watch:
            self.served.watch()

    async def catch_up(self) -> None:
        """Index and embed what changed while the server was down, a slice at a time
        between tool calls, each layer in turn; the embedder is loaded on the way and
        stays loaded."""
        try:
            while not await self.thread.run(self.served.catch_up):
                await asyncio.sleep(0)
        except SagememError:
            pass  # a tool call meets the same problem and says what it is

    def stop(self) -> None:
        self.layers.close()

    async def run_stdio_async(self) -> None:
        """The SDK's stdio transport, with an answer for each line it cannot read
        (``stdio.py``); the SDK's own leaves such a client waiting for ever."""
        await serve_stdio(self._lowlevel_server)


@asynccontextmanager
async def _lifespan(server: MCPServer[None]) -> AsyncIterator[None]:
    assert isinstance(server, SagememMCP)
    await server.thread.run(server.start)
    catching_up = asyncio.create_task(server.catch_up())
    try:
        yield None
    finally:
        catching_up.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await catching_up
        await server.thread.run(server.stop)


def memory_uri(file: str, layer: str = PROJECT) -> str:
    """The resource URI of ``file``, percent-encoded: ``?``, ``#`` and ``%`` may be in a
    memory's name, and the SDK decodes the name it matches (``%41`` reads ``A``)."""
    uri = GLOBAL_MEMORY_URI if layer == GLOBAL else MEMORY_URI
    return uri.format(name=quote(file, safe=""))


def _parameters(tool: Callable[..., Any]) -> frozenset[str]:
    return frozenset(inspect.signature(tool).parameters)


def _annotations(tool: Callable[..., Any]) -> ToolAnnotations:
    hints = tool.__func__.__dict__["mcp_hints"]  # type: ignore[attr-defined]
    return ToolAnnotations(read_only_hint=hints.read_only, destructive_hint=hints.destructive,
                           idempotent_hint=hints.idempotent, open_world_hint=False)


def _text(text: str) -> TextContent:
    return TextContent(type="text", text=text)


def build_server(store: MemoryStore | Layers, *, watch: bool = True,
                 session_id: str | None = None,
                 settings: Settings | None = None) -> SagememMCP:
    """The MCP server over ``store`` (not started: ``run`` it, or connect a client): a
    ``Layers``, or a bare store as the project layer alone; what it hands the model is
    recorded as seen in ``session_id`` (none: not at all). With ``settings``, a write
    that names the global layer makes its folder when it is missing."""
    layers = store if isinstance(store, Layers) else Layers(store)
    return SagememMCP(layers, watch=watch, session_id=session_id, settings=settings)


def transport_security(host: str, port: int) -> TransportSecuritySettings:
    """DNS-rebinding protection for ``host:port``, always on: the SDK turns it on by
    itself only for three spellings of loopback (``address.allowed_hosts`` says why)."""
    hosts = allowed_hosts(host, port)
    return TransportSecuritySettings(enable_dns_rebinding_protection=True,
                                     allowed_hosts=hosts,
                                     allowed_origins=[f"http://{h}" for h in hosts])


def serve(store: MemoryStore | Layers, *, http: tuple[str, int] | None = None,
          session_id: str | None = None, settings: Settings | None = None) -> None:
    """Serve until the client goes away (stdio) or the process is stopped (HTTP);
    ``http`` is a loopback host and port (``address.py`` checks it). With ``settings``
    the prompt hook is served too, while this server runs (``serve/``; docs/serve.md):
    Claude Code keeps its MCP server up for the whole session."""
    server = build_server(store, session_id=session_id, settings=settings)
    listener = start_listener(settings) if settings is not None else None
    try:
        if http is None:
            server.run("stdio")
        else:
            server.run("streamable-http", host=http[0], port=http[1],
                       transport_security=transport_security(*http))
    except KeyboardInterrupt:
        pass  # Ctrl-C on an HTTP server: the lifespan has closed the store
    finally:
        server.thread.shutdown()
        if listener is not None:
            listener.close()
