"""A command's outputs: their paths checked before the work, their folders made once the inputs
are checked, and the results saved after the work, or kept when that fails.

``Outputs`` collects a command's output paths (``add``); each is checked at once by
``common.writable`` (a bad one is a ``ConfigError`` naming the flag, before anything is sent).
``made()`` then creates the missing folders, so that the save at the end finds them; if the work
refuses an input after all (a check only the engine can make) or fails (a history out of
reach), the folders it made and left empty are removed again: a refused command leaves nothing
behind.

``save(...)`` runs the write at the end. A write that fails there (a full disk, a folder removed
or replaced meanwhile) must not lose an hour of measurements: the result, with the
``not-saved`` flag (``kfp_bench.outcome``), goes to a fallback file in the system's temporary
folder, ``kfp-bench-<command>-<time>-<pid>.json``, or to stdout when even that fails; one line on
stderr says why and where, and the command exits ``EXIT_NOT_SAVED``.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from kfp_bench.cli.common import writable
from kfp_bench.errors import ConfigError

NOT_SAVED = "not-saved"


class Outputs:
    """The output paths of one command."""

    def __init__(self) -> None:
        self._folders: list[tuple[Path, str, str]] = []  # (folder, flag, path as given)
        self._made: list[Path] = []

    def add(self, path: str | None, flag: str, *, folder: bool = False) -> Path | None:
        """Check the file (``folder``: the folder) ``path`` of ``flag``; None when the flag was
        not given."""
        if not path:
            return None
        p = writable(path, flag, folder=folder)
        self._folders.append((p if folder else p.parent, flag, path))
        return p

    def make(self) -> None:
        """Create the missing folders (call it once every input is checked)."""
        for folder, flag, path in self._folders:
            self._made.extend(q for q in (folder, *folder.parents) if not q.exists())
            try:  # changed since it was checked: still refused before the work, in one line
                folder.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                self.undo()
                raise ConfigError(
                    f"{flag} {path}: cannot make the folder {folder} "
                    f"({exc.strerror or exc}); give another path"
                ) from None

    def undo(self) -> None:
        """Remove the folders ``make`` created (deepest first), those still empty."""
        for q in self._made:
            with contextlib.suppress(OSError):  # not empty any more: not ours alone
                q.rmdir()

    @contextlib.contextmanager
    def made(self):
        """``make``; then ``undo`` if the block fails: an input only the engine could refuse
        (a ``ConfigError`` or ``ResultsError``), or a history out of reach; a folder that
        holds anything is kept."""
        self.make()
        try:
            yield self
        except BaseException:
            self.undo()
            raise


def save(write: Callable[[], object], doc, *, command: str, flag: str, path) -> bool:
    """Run ``write()``; True when it worked. When it fails with an ``OSError``, keep ``doc``
    (a dict, or a function that returns it) as the module docstring says, and return False."""
    try:
        write()
        return True
    except OSError as exc:
        keep(doc() if callable(doc) else doc, command=command, flag=flag, path=path, error=exc)
        return False


def keep(doc: dict, *, command: str, flag: str, path, error: OSError) -> Path | None:
    """Put ``doc``, flagged ``not-saved``, in a fallback file or on stdout; say so on stderr.
    Returns the fallback file, or None when the result went to stdout."""
    doc = dict(doc)
    doc["flags"] = [*(f for f in doc.get("flags") or [] if f != NOT_SAVED), NOT_SAVED]
    why = error.strerror or str(error)
    try:
        fallback = _fallback(doc, command)
        where = f"the results are in {fallback}"
    except OSError:
        fallback = None
        json.dump(doc, sys.stdout, indent=1)
        sys.stdout.write("\n")
        sys.stdout.flush()
        where = "the results are above on stdout, as JSON"
    print(f"kfp-bench: {flag} {path}: could not write it ({why}); {where}", file=sys.stderr)
    return fallback


def _fallback(doc: dict, command: str) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    path = Path(tempfile.gettempdir()) / f"kfp-bench-{command}-{stamp}-{os.getpid()}.json"
    f = open(path, "x")  # noqa: SIM115  (never over another file; closed below)
    try:
        with f:
            json.dump(doc, f, indent=1)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
    except OSError:
        with contextlib.suppress(OSError):  # no half result left behind
            path.unlink()
        raise
    return path
