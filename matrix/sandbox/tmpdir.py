"""Emptying the private temporary directory of a worker that has no mount namespace (process
isolation): iterative (a directory nested thousands of levels deep is no problem), with one
directory descriptor open at a time, never following links, restoring the directory's own mode
and removing its extended attributes."""

from __future__ import annotations

import os
import stat

__all__ = ["wipe", "CELL_DIR_MODE"]

# a process-mode cell directory under a root executor: owned by root, group the cell's program gid
# (which the cell's test process holds too), setgid so what either makes keeps that group; no access
# for other uids (another worker's, another run's programs)
CELL_DIR_MODE = 0o2770

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def wipe(path: str, mode: int = 0o700) -> None:
    """Remove everything inside ``path`` and reset the directory itself (mode, xattrs): ``mode``
    is :data:`CELL_DIR_MODE` for a directory shared by a cell's two uids (not sticky: a cell's test
    and program processes remove each other's files, as one process of plain Python does; red-team
    pass 18, :func:`.remote.peer.share_files`), else the executor's own private 0700."""
    try:
        os.chmod(path, 0o700)
    except OSError:
        pass
    try:
        fd = os.open(path, _DIR_FLAGS)
    except OSError:
        return
    names: list[str] = []  # the path from ``path`` down to ``fd``, one name per level
    stuck: set[int] = set()  # inodes of directories that could not be removed
    try:
        while True:
            try:
                entries = list(os.scandir(fd))
            except OSError:
                entries = []
            descended = False
            for e in entries:
                try:
                    if e.is_dir(follow_symlinks=False):
                        if e.inode() in stuck:
                            continue
                        try:
                            os.chmod(e.name, 0o700, dir_fd=fd, follow_symlinks=False)
                        except (OSError, NotImplementedError):
                            pass
                        sub = os.open(e.name, _DIR_FLAGS, dir_fd=fd)
                        os.close(fd)
                        fd = sub
                        names.append(e.name)
                        descended = True
                        break
                    os.unlink(e.name, dir_fd=fd)
                except OSError:
                    pass
            if descended:
                continue
            if not names:
                break
            parent = os.open("..", _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = parent
            name = names.pop()
            try:
                os.rmdir(name, dir_fd=fd)
            except OSError:
                try:
                    stuck.add(os.stat(name, dir_fd=fd, follow_symlinks=False).st_ino)
                except OSError:
                    pass
    finally:
        os.close(fd)
    try:
        for attr in os.listxattr(path, follow_symlinks=False):
            try:
                os.removexattr(path, attr, follow_symlinks=False)
            except OSError:
                pass
    except OSError:
        pass
    try:
        os.chmod(path, stat.S_IMODE(mode))
    except OSError:
        pass
