"""Where ``sagemem mcp --http`` may listen: loopback only.

The server has no authentication: anyone who can reach its port can read and write the
memories. So it listens on this machine's loopback interface and nowhere else; a proxy
with authentication in front of it is the user's explicit choice, not a flag.

Loopback alone does not keep a web page out: a page can rebind its own name to 127.0.0.1
(DNS rebinding) and talk to the port from the browser. Its requests carry its name in
``Host`` (and ``Origin``), so the server accepts only the names of this address.

The address is bound once before the command says it serves (``check_bindable``): a
port in use is one error line, not a "serving" line followed by uvicorn's log and exit 3.
"""

from __future__ import annotations

import ipaddress
import socket

from ..errors import AddressUnavailable, InvalidArgument

LOOPBACK_NAMES = frozenset({"localhost"})
LOCALHOST_ALIASES = ("localhost", "127.0.0.1", "::1")
"""What a client may call a server bound to ``localhost`` (it resolves to either)."""


def loopback_address(text: str) -> tuple[str, int]:
    """``127.0.0.1:8765``, ``[::1]:8765``, ``localhost:8765`` or a bare port (on 127.0.0.1)."""
    host, sep, port_text = text.strip().rpartition(":")
    if not sep:
        host, port_text = "127.0.0.1", text.strip()
    host = host.strip("[]") or "127.0.0.1"
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise InvalidArgument("--http", f"{text!r} has no port from 1 to 65535; "
                                        "give 127.0.0.1:PORT")
    if not _is_loopback(host):
        raise InvalidArgument("--http", f"{host} is not a loopback address; the server has "
                                        "no authentication, so it listens on 127.0.0.1, "
                                        "::1 or localhost only")
    return host, int(port_text)


def _is_loopback(host: str) -> bool:
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def allowed_hosts(host: str, port: int) -> list[str]:
    """The ``Host`` headers a request to ``host:port`` may carry: the address as bound
    (and lowercased, as browsers send it), and for ``localhost`` the addresses it names.

    The SDK checks Host and Origin only for the spellings 127.0.0.1, localhost and ::1;
    for LOCALHOST or 127.0.0.2 it checks nothing, so the server always passes this list.
    """
    names = dict.fromkeys([host, host.lower()])
    if host.lower() in LOOPBACK_NAMES:
        names.update(dict.fromkeys(LOCALHOST_ALIASES))
    return [host_port(name, port) for name in names]


def host_port(host: str, port: int) -> str:
    """``host:port`` as a URL spells it: an IPv6 address in brackets (``[::1]:8765``)."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def url(host: str, port: int) -> str:
    """The server's endpoint, ``http://127.0.0.1:8765/mcp``."""
    return f"http://{host_port(host, port)}/mcp"


def check_bindable(host: str, port: int) -> None:
    """Bind ``host:port`` once, as the server will (``SO_REUSEADDR``, every address a
    name resolves to), and let it go: a port in use is one ``AddressUnavailable`` line
    before anything says "serving", not uvicorn's log line after it (exit 3)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise AddressUnavailable(host_port(host, port), str(exc)) from None
    for family, kind, proto, _, address in infos:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(address)
            except OSError as exc:
                raise AddressUnavailable(host_port(host, port),
                                         (exc.strerror or str(exc)).lower()) from None
