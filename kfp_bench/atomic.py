"""Files and folders that appear whole or not at all.

``write_bytes`` and ``write_json`` write a temporary file beside the target, fsync it and rename
it over the target; something other than a regular file (``/dev/stdout``, a pipe) is written
into, never replaced. ``folder(path, fresh=names)`` yields a stage folder that replaces ``path``
when the block ends without error (else it is removed). Files already there are carried over as
hard links, less the ``fresh`` names. The swap is one ``renameat2(RENAME_EXCHANGE)`` on Linux;
elsewhere the old folder is renamed aside first (a crash leaves it whole as ``.NAME.old-XXXX``);
a folder that cannot be renamed (a mount point) gets the files moved in one by one."""

from __future__ import annotations

import contextlib
import ctypes
import errno
import json
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path


def _umask() -> int:
    """This process's umask: read from /proc on Linux; elsewhere by setting it and setting it
    back (which, for that instant, other threads would see)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


#: Errors of a folder rename that say "not here" (a mount, a file system without it), not "no".
_CANNOT_RENAME = {errno.EBUSY, errno.EXDEV, errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP}


def write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path``, whole or not at all; the folder is created when missing."""
    path = Path(path)
    real = Path(os.path.realpath(path))  # a link to a file: replace the file, keep the link
    if real.exists() and not real.is_file():
        if real.is_dir():
            raise IsADirectoryError(errno.EISDIR, "a folder, not a file", str(path))
        with open(real, "wb") as f:
            f.write(data)
        return path
    real.parent.mkdir(parents=True, exist_ok=True)
    mode = stat.S_IMODE(real.stat().st_mode) if real.exists() else 0o666 & ~_umask()
    fd, tmp = tempfile.mkstemp(prefix=f".{real.name}.", suffix=".tmp", dir=real.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)  # mkstemp's 0600 would hide the result from the other readers
        os.replace(tmp, real)
    except BaseException:
        with contextlib.suppress(OSError):  # the folder may be gone: keep the first error
            os.unlink(tmp)
        raise
    _fsync_dir(real.parent)
    return path


def write_json(doc, path: str | os.PathLike) -> Path:
    """Write ``doc`` as indented JSON to ``path``, whole or not at all."""
    return write_bytes(path, (json.dumps(doc, indent=1) + "\n").encode())


@contextlib.contextmanager
def folder(path: str | os.PathLike, *, fresh=()) -> Iterator[Path]:
    """Yield a stage folder to write ``path``'s new content into; move it into place at the end.

    Args:
        path: the folder; created with its parents when missing.
        fresh: names the block writes anew: not carried over from the existing folder.

    Raises:
        NotADirectoryError: ``path`` is a file.
        OSError: the stage cannot be made or moved; ``path`` is then unchanged.
    """
    target = Path(os.path.abspath(path))
    if target.exists() and not target.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, "a file, not a folder", str(path))
    target.parent.mkdir(parents=True, exist_ok=True)
    pinned = target.is_dir() and _pinned(target)
    stage = Path(tempfile.mkdtemp(prefix=f".{target.name}.new-", dir=target.parent))
    try:
        os.chmod(
            stage, stat.S_IMODE(target.stat().st_mode) if target.is_dir() else 0o777 & ~_umask()
        )
        if target.is_dir() and not pinned:
            _carry_over(target, stage, skip=set(fresh))
        yield stage
        _fsync_tree(stage)
        if pinned:
            _move_each(stage, target)
        else:
            _swap(stage, target)
    finally:
        shutil.rmtree(stage, ignore_errors=True)  # after an exchange: the old folder


def _pinned(target: Path) -> bool:
    """Whether ``target`` cannot be swapped: a mount point, or where this process works (after a
    swap its working directory would be the removed old folder)."""
    cwd = os.path.realpath(os.getcwd())
    real = os.path.realpath(target)
    return os.path.ismount(real) or cwd == real or cwd.startswith(real + os.sep)


def _carry_over(src: Path, dst: Path, *, skip: set) -> None:
    for entry in src.iterdir():
        if entry.name in skip:
            continue
        if entry.is_symlink():
            os.symlink(os.readlink(entry), dst / entry.name)
        elif entry.is_dir():
            shutil.copytree(entry, dst / entry.name, symlinks=True, copy_function=_link)
        else:
            _link(entry, dst / entry.name)


def _link(src, dst) -> None:
    try:
        os.link(src, dst)
    except OSError:  # a file system without hard links
        shutil.copy2(src, dst)


def _swap(stage: Path, target: Path) -> None:
    try:
        if not target.exists():
            os.rename(stage, target)
        elif not _exchange(stage, target):
            _swap_via_aside(stage, target)
    except OSError as exc:
        if exc.errno not in _CANNOT_RENAME:
            raise
        target.mkdir(exist_ok=True)
        _move_each(stage, target)


def _swap_via_aside(stage: Path, target: Path) -> None:
    aside = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
    os.rename(target, aside)  # onto the empty folder just made: POSIX allows it
    try:
        os.rename(stage, target)
    except BaseException:
        os.rename(aside, target)
        raise
    shutil.rmtree(aside, ignore_errors=True)


def _renameat2():
    if not sys.platform.startswith("linux"):
        return None
    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):  # a libc older than glibc 2.28, or another libc
        return None
    fn.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint)
    fn.restype = ctypes.c_int
    return fn


_AT_FDCWD, _RENAME_EXCHANGE = -100, 2


def _exchange(a: Path, b: Path) -> bool:
    """Swap ``a`` and ``b`` in one step; False where the system or file system cannot."""
    fn = _renameat2()
    if fn is None:
        return False
    if fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        _fsync_dir(b.parent)
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), str(b))


def _move_each(stage: Path, target: Path) -> None:
    for entry in sorted(stage.iterdir()):
        os.replace(entry, target / entry.name)
    _fsync_dir(target)


def _fsync_tree(top: Path) -> None:
    for root, _dirs, files in os.walk(top):
        for name in files:
            p = os.path.join(root, name)
            if os.path.isfile(p) and not os.path.islink(p):
                fd = os.open(p, os.O_RDONLY)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
        _fsync_dir(Path(root))


def _fsync_dir(path: Path) -> None:
    """Make a rename in ``path`` durable; a no-op where folders cannot be opened (Windows)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:  # some file systems refuse fsync on a folder; the rename is done
        pass
    finally:
        os.close(fd)
