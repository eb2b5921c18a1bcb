"""The error tree drawn in `omniagent.errors` is true: one root, every exception class under it and in the drawing."""

import importlib
import inspect
import pkgutil

import omniagent
from omniagent import errors
from omniagent.errors import OmniagentError


def _exception_classes() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(omniagent.__path__, "omniagent."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if inspect.isclass(value) and issubclass(value, BaseException) and value.__module__ == info.name:
                found[f"{info.name}.{name}"] = value
    return found


def test_every_exception_omniagent_defines_is_under_the_one_root() -> None:
    """House style (after httpx's `_exceptions.py`): one catchable root for everything raised on purpose."""
    outside = [name for name, cls in _exception_classes().items() if not issubclass(cls, OmniagentError)]
    assert outside == []


def test_every_public_exception_is_drawn_in_the_tree() -> None:
    """The docstring of `omniagent.errors` names every public exception class, so a reader sees the whole tree."""
    drawing = errors.__doc__ or ""
    missing = [
        name
        for name in _exception_classes()
        if not name.rsplit(".", 1)[1].startswith("_") and name.rsplit(".", 1)[1] not in drawing
    ]
    assert missing == []


def test_there_is_one_class_per_error_name() -> None:
    """Two classes with one name (as `RouteError` once was) make `except` clauses catch the wrong one."""
    names = [name.rsplit(".", 1)[1] for name in _exception_classes()]
    assert sorted({n for n in names if names.count(n) > 1}) == []
