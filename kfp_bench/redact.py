"""Credentials written into URLs (``https://user:password@host``), kept out of what leaves.

A URL's userinfo is a secret like a token: it never reaches an error message, a log, a report
or saved options. ``public_url`` is the URL fit to show; ``scrub`` does the same to every URL in a
text (an error that quotes one). The request itself still goes to the URL as given.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

#: scheme://userinfo@ : the userinfo is everything up to the last "@" before the path.
_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)[^/\s@'\"]+@")


def public_url(url: str) -> str:
    """``url`` without its userinfo (``https://u:p@h/x`` -> ``https://h/x``)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return scrub(url)
    if "@" not in parts.netloc:
        return url
    return parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]).geturl()


def scrub(text: str) -> str:
    """``text`` with the userinfo of every URL in it removed."""
    return _USERINFO.sub(lambda m: m.group("scheme"), text)
