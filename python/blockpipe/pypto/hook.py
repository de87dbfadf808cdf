"""The import hook: a sys.meta_path finder that resolves pypto's module
names (and the test harness's, and torch's when torch is not installed) to
blockpipe.

- `pypto.language` is blockpipe.language itself (programs are blockpipe's);
  its submodules (`pypto.language.distributed`, ...) give blockpipe's
  `Unsupported` for every name: a CompileError where a program uses one.
- `pypto`, `pypto.runtime`, `pypto.ir`, `pypto.backend`, ... are modules
  with the names `stubs.MODULES` lists; any other name they are asked for
  is `stubs.missing` (a SKIP naming it when called). Every `pypto.*`
  module name resolves, so `from pypto.runtime.device_runner import X`
  imports and X is missing.
- `harness`, `harness.core.harness`, ... hold `harness.MODULES`.
- `torch` is the NumPy stand-in when the real torch cannot be imported.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
from typing import Dict, Optional

from blockpipe.language.unsupported import Unsupported
from blockpipe.pypto import harness, stubs

_ROOTS = ("pypto", "harness", "torch")


def _torch_installed() -> bool:
    """Whether a real torch is on the path (looked up past this finder)."""
    for finder in sys.meta_path:
        if isinstance(finder, PyptoFinder):
            continue
        find = getattr(finder, "find_spec", None)
        if find is not None and find("torch", None) is not None:
            return True
    return False


class _Loader(importlib.abc.Loader):
    def __init__(self, names: Dict[str, object], fallback, alias=None):
        self.names, self.fallback, self.alias = names, fallback, alias

    def create_module(self, spec):
        if self.alias is not None:
            self._own_spec = self.alias.__spec__
            return self.alias
        return types.ModuleType(spec.name)

    def exec_module(self, module):
        if self.alias is not None:
            # The import machinery gave it the alias's spec; it keeps its own.
            module.__spec__ = self._own_spec
            return
        module.__dict__.update(self.names)
        name, fallback = module.__name__, self.fallback

        def __getattr__(attr: str):
            if attr.startswith("__"):
                raise AttributeError(attr)
            child = f"{name}.{attr}"
            if child in stubs.MODULES or child in harness.MODULES:
                return importlib.import_module(child)
            return fallback(name, attr)

        module.__getattr__ = __getattr__


class PyptoFinder(importlib.abc.MetaPathFinder):
    def __init__(self, with_torch: bool):
        self.with_torch = with_torch

    def find_spec(self, fullname: str, path=None, target=None):
        root = fullname.split(".", 1)[0]
        if root not in _ROOTS or (root == "torch" and not self.with_torch):
            return None
        loader = self._loader(fullname)
        if loader is None:
            return None
        spec = importlib.machinery.ModuleSpec(fullname, loader, is_package=True)
        spec.submodule_search_locations = []
        return spec

    def _loader(self, fullname: str) -> Optional[_Loader]:
        import blockpipe.language

        if fullname == "pypto.language":
            return _Loader({}, None, alias=blockpipe.language)
        if fullname.startswith("pypto.language."):
            return _Loader({}, lambda module, attr: Unsupported(f"{module}.{attr}"))
        if fullname.startswith("pypto"):
            names = dict(stubs.MODULES.get(fullname, {}))
            if fullname == "pypto":
                names["language"] = blockpipe.language
            return _Loader(names, stubs.missing)
        if fullname.startswith("harness"):
            if fullname not in harness.MODULES:
                return None
            return _Loader(harness.MODULES[fullname], _no_attribute)
        from blockpipe.pypto import torch_standin

        module = torch_standin.MODULES.get(fullname)
        return None if module is None else _Loader({}, None, alias=module)


def _no_attribute(module: str, attr: str):
    raise AttributeError(f"module {module!r} has no attribute {attr!r}")


_installed: Optional[PyptoFinder] = None


def install() -> None:
    """Puts the finder first on sys.meta_path (once)."""
    global _installed
    if _installed is None:
        _installed = PyptoFinder(with_torch=not _torch_installed())
        sys.meta_path.insert(0, _installed)


def uninstall() -> None:
    """Takes the finder off sys.meta_path and forgets the modules it made."""
    global _installed
    if _installed is None:
        return
    sys.meta_path.remove(_installed)
    for name in list(sys.modules):
        root = name.split(".", 1)[0]
        if root in ("pypto", "harness") or (root == "torch" and _installed.with_torch):
            del sys.modules[name]
    _installed = None
