"""``python -m coevo``: the ``coevo`` command.

``python -m`` puts the current directory first on ``sys.path``, so a ``matrix.py`` (or ``roles/``,
``training/``) of the user's would shadow coevo's own packages. Unless the current directory is
the checkout coevo itself runs from, it is taken off the path before anything else is imported,
as ``python -P`` would; :func:`coevo.cli.main` then checks the packages it is about to use."""

import os
import sys
from pathlib import Path


def _drop_cwd_from_path() -> None:
    if sys.flags.safe_path or not sys.path:
        return
    here = Path(__file__).resolve().parent.parent  # the directory holding coevo/
    first = Path(sys.path[0] or os.getcwd()).resolve()
    if first == Path(os.getcwd()).resolve() and first != here:
        del sys.path[0]


_drop_cwd_from_path()

from coevo.cli import main  # noqa: E402

sys.exit(main())
