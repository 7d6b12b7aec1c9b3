"""``java.net.URI``'s parser (RFC 2396) as plain Python, for ksqlDB's URL_EXTRACT_* functions.

ksqlDB builds a ``java.net.URI`` from the text and reads one component; a syntax error makes
the result null. Spark's ``parse_url`` follows ``java.net.URL`` instead (other validity rules,
other components), so these functions run as Python UDFs over :func:`parse`. This module must
not import pyspark.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import unquote

_ALNUM = "A-Za-z0-9"
_UNRESERVED = _ALNUM + r"\-_.!~*'()"
_RESERVED = r";/?:@&=+$,\[\]"
# "other": characters outside US-ASCII that are neither control nor space characters.
_OTHER = r"\u00a0-\U0010ffff"
_ESCAPED = r"%[0-9A-Fa-f]{2}"


def _chars(allowed: str) -> re.Pattern[str]:
    return re.compile(rf"(?:[{allowed}{_OTHER}]|{_ESCAPED})*")


_URIC = _chars(_UNRESERVED + _RESERVED)
_PATH = _chars(_UNRESERVED + r";/:@&=+$,")
_USERINFO = _chars(_UNRESERVED + r";:&=+$,")
_REG_NAME = _chars(_UNRESERVED + r"$,;:@&=+")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+\-.]*")
_IPV4 = re.compile(r"(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})")
_LABEL = re.compile(rf"[{_ALNUM}](?:[{_ALNUM}\-]*[{_ALNUM}])?")


class URISyntaxError(ValueError):
    """The text is not a URI (``java.net.URISyntaxException``)."""


@dataclass(frozen=True)
class Uri:
    """The components ``java.net.URI`` reports; paths, queries and fragments decoded."""

    scheme: str | None = None
    host: str | None = None
    port: int = -1
    path: str | None = None
    query: str | None = None
    fragment: str | None = None


def _decode(text: str | None) -> str | None:
    # URI.decode: %XX sequences as UTF-8, malformed bytes as U+FFFD; '+' stays '+'.
    return None if text is None else unquote(text, encoding="utf-8", errors="replace")


def _check(pattern: re.Pattern[str], text: str) -> None:
    if pattern.fullmatch(text) is None:
        msg = f"Illegal character in {text!r}"
        raise URISyntaxError(msg)


def parse(text: str) -> Uri:
    """Parse ``text`` as ``new java.net.URI(text)`` does.

    Raises:
        URISyntaxError: where Java throws ``URISyntaxException``.
    """
    fragment = None
    if "#" in text:
        text, fragment = text.split("#", 1)
        _check(_URIC, fragment)
    scheme = None
    colon = re.match(r"[^/?#:]*:", text)
    if colon is not None:
        scheme = text[: colon.end() - 1]
        if _SCHEME.fullmatch(scheme) is None:
            msg = f"Illegal character in scheme name: {text!r}"
            raise URISyntaxError(msg)
        text = text[colon.end() :]
        if not text.startswith("/"):
            # An opaque URI (mailto:x): no host, path or query.
            if not text:
                msg = "Expected scheme-specific part"
                raise URISyntaxError(msg)
            _check(_URIC, text)
            return Uri(scheme=scheme, fragment=_decode(fragment))
    query = None
    if "?" in text:
        text, query = text.split("?", 1)
        _check(_URIC, query)
    host, port = None, -1
    if text.startswith("//"):
        end = len(text)
        for i, ch in enumerate(text[2:], 2):
            if ch == "/":
                end = i
                break
        authority, text = text[2:end], text[end:]
        if authority:
            host, port = _authority(authority)
        elif not text and query is None and fragment is None:
            msg = "Expected authority"
            raise URISyntaxError(msg)
    _check(_PATH, text)
    return Uri(
        scheme=scheme, host=host, port=port, path=_decode(text), query=_decode(query), fragment=_decode(fragment)
    )


def _authority(authority: str) -> tuple[str | None, int]:
    server = _server(authority)
    if server is not None:
        return server
    # Not a server (user@host:port): a registry-based authority, which has no host.
    _check(_REG_NAME, authority)
    return None, -1


def _server(authority: str) -> tuple[str | None, int] | None:
    rest = authority
    if "@" in rest:
        userinfo, rest = rest.rsplit("@", 1)
        if _USERINFO.fullmatch(userinfo) is None:
            return None
    if rest.startswith("["):
        close = rest.find("]")
        if close < 0 or re.fullmatch(r"[0-9A-Fa-f:.]+", rest[1:close]) is None:
            return None
        host, rest = rest[: close + 1], rest[close + 1 :]
    else:
        match = re.match(r"[^:]*", rest)
        assert match is not None
        host, rest = match.group(0), rest[match.end() :]
        if not _is_host(host):
            return None
    port = -1
    if rest:
        if not rest.startswith(":") or re.fullmatch(r"\d*", rest[1:]) is None:
            return None
        if rest[1:]:
            port = int(rest[1:])
            if port > 2**31 - 1:
                return None
    return host, port


def _is_host(host: str) -> bool:
    ipv4 = _IPV4.fullmatch(host)
    if ipv4 is not None and all(int(part) <= 255 for part in ipv4.groups()):
        return True
    labels = host[:-1].split(".") if host.endswith(".") else host.split(".")
    if not all(_LABEL.fullmatch(label) for label in labels):
        return False
    # The rightmost label of a qualified name must start with a letter.
    return len(labels) == 1 or labels[-1][0].isalpha()


def component(text: str | None, name: str) -> object:
    """One component of the URI ``text`` (``port`` is None when absent), or None if invalid."""
    if text is None:
        return None
    try:
        uri = parse(text)
    except URISyntaxError:
        return None
    value = getattr(uri, name)
    return None if name == "port" and value == -1 else value


def query_parameter(text: str | None, name: str | None) -> str | None:
    """URL_EXTRACT_PARAMETER: the first ``name=value`` of the decoded query ("" for a bare name)."""
    query = component(text, "query")
    if not isinstance(query, str):
        return None
    for param in query.split("&"):
        key, sep, value = param.partition("=")
        if key == name:
            return value if sep else ""
    return None
