"""Credentials kept out of what leaves: reports, saved options, logs and error messages.

A URL's userinfo (``https://user:password@host``) and a secret header's value are secrets like a
token. ``public_url`` is a URL fit to show, ``scrub`` does the same to every URL in a text (an
error that quotes one), ``header`` is a header fit to show, and ``param`` a parameter's value. The
request itself still goes out as given.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

#: scheme://userinfo@ : the userinfo is everything up to the last "@" before the host.
_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)[^/?#\s'\"]*@")
#: A URL written without its scheme, "user:password@host[:port][/path]".
_BARE_USERINFO = re.compile(r"^[^/?#\s'\"]*@(?=[A-Za-z0-9\[])")
#: What a secret's value is shown as.
HIDDEN = "<redacted>"
#: Header names whose value is a credential: Authorization, Cookie, X-Api-Key, X-Auth-Token, ...
_SECRET_HEADER = re.compile(
    r"auth|token|secret|key|cookie|session|passw|credential|signature", re.IGNORECASE
)
#: A header name (RFC 9110 token).
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
#: A word shown from a text that is not a header: letters and hyphens read as a name; a token
#: almost always carries digits or other signs.
_NAME_LIKE = re.compile(r"[A-Za-z][A-Za-z-]{0,39}")
#: Control characters but tab (CR, LF, ...) split a header's text into lines shown one by one.
_CONTROL = re.compile(r"([\x00-\x08\x0a-\x1f\x7f]+)")
#: Parameters whose value may be a credential, by a word of their name (token_secret, not
#: llm_tokenizer or llm_output_tokens).
_SECRET_PARAM = re.compile(
    r"(?:^|_)(?:token|secret|password|passwd|credentials?|api_?key)(?:_|$)", re.IGNORECASE
)


def public_url(url: str) -> str:
    """``url`` without its userinfo (``https://u:p@h/x`` -> ``https://h/x``; ``u:p@h:80`` ->
    ``h:80``, a URL that lacks its scheme) and with none in its query."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return scrub(url)
    if "@" in parts.netloc:
        url = parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]).geturl()
    elif not parts.netloc and "://" not in url:
        url = _BARE_USERINFO.sub("", url)
    return scrub(url)


def scrub(text: str) -> str:
    """``text`` with the userinfo of every URL in it removed."""
    return _USERINFO.sub(lambda m: m.group("scheme"), text)


def header(text: str) -> str:
    """A header as given (``Name: value``) fit to show: a secret header's value is hidden; of a
    text that is not a header, only a leading word that reads as a name is shown. A text with
    control characters is taken line by line, so that no line hides a secret header."""
    pieces = _CONTROL.split(text)
    return "".join(p if i % 2 else _one_header(p) for i, p in enumerate(pieces))


def _one_header(text: str) -> str:
    name, colon, value = text.partition(":")
    if colon and _HEADER_NAME.fullmatch(name.strip()):
        return f"{name}: {HIDDEN}" if value.strip() and _SECRET_HEADER.search(name) else text
    word, _, rest = text.strip().partition(" ")
    if not _NAME_LIKE.fullmatch(word):
        return HIDDEN if text.strip() else text
    return f"{word} {HIDDEN}" if rest.strip() else word


def param(name: str, value):
    """A parameter's value fit to show: a text is hidden when the parameter's name says it may be
    a credential, and shown with no URL's userinfo otherwise (a value meant as a URL may lack
    its scheme: give it through ``public_url`` first)."""
    if not isinstance(value, str):
        return value
    return HIDDEN if _SECRET_PARAM.search(name) else scrub(value)
