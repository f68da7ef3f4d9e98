"""Which twin of the load engine runs: the plain module or its compiled build.

``engine.py`` is plain Python and runs as such. ``setup.py`` also compiles a twin of it with
Cython (``kfp_bench.load._cengine``, typed by ``engine.pxd``), stamped with the SHA-256 of the
source it was built from. ``engine`` hands out the twin's classes only when that stamp matches
its own text, so that an edited engine never runs a stale build; ``KFP_BENCH_ENGINE=python``
forces the plain one.
"""

from __future__ import annotations

import hashlib
import os


def compiled_twin(source: str):
    """The compiled twin module when it exists, was built from ``source`` (engine.py's path) as
    it is now, and ``KFP_BENCH_ENGINE`` is not ``python``; else None."""
    if os.environ.get("KFP_BENCH_ENGINE", "").strip().lower() == "python":
        return None
    try:
        from kfp_bench.load import _cengine
    except ImportError:
        return None
    with open(source, "rb") as f:
        if getattr(_cengine, "SOURCE_SHA256", None) != hashlib.sha256(f.read()).hexdigest():
            return None  # built from another version of engine.py: stale, not used
    return _cengine
