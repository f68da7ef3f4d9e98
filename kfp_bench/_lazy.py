"""Package names imported on first use (PEP 562), for the engine's sub-packages.

A package's ``__init__`` that imported its public names eagerly would make importing any one of
its modules import all of them. A pipeline step embeds only the modules it runs
(``components/_embed.py``), and the first step, which checks the parameters, must not need the
request loop or the KFP driver to be there.
"""

from __future__ import annotations

import sys
from importlib import import_module


def exports(package: str, where: dict[str, str]):
    """A module ``__getattr__`` for ``package``: each name of ``where`` comes from its module.

    Args:
        package: the package's ``__name__``.
        where: public name -> the sub-module (of ``package``) that defines it.
    """

    def __getattr__(name: str):
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(f"{package}.{where[name]}"), name)
        setattr(sys.modules[package], name, value)  # once: later lookups are plain attributes
        return value

    return __getattr__
