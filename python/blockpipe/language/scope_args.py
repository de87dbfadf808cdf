"""The arguments of the scopes outline.py outlines: `pl.at(level=...,
name_hint=..., optimizations=[...])` and `pl.spmd(n, ...)`, read from the
source as written (known at compile time)."""

from __future__ import annotations

import ast
import copy
from typing import Optional, Tuple

from blockpipe.language.source import lookup_static as _static
from blockpipe.language.types import Level, Split, SplitMode
from blockpipe.language.unsupported import Unsupported

# pl.at's keywords blockpipe has no meaning for.
_AT_UNSUPPORTED = ("role", "no_dep_args", "allow_early_resolve", "windowize")
# pl.at's keywords that change nothing in blockpipe: `deps=[tid]` orders the
# scope after a task, which ordering tasks by the tensors they read and
# write does whenever it matters; `dumps=[q]` asks for pypto's selective
# argument dump, a debugging aid (see pl.dump_tag).
_AT_IGNORED = ("deps", "dumps")


class ScopeArgs:
    """The part of the Outliner that reads a scope's arguments (its
    `namespace` and `error` are the Outliner's)."""

    def _spmd_args(self, call: ast.Call):
        """The pl.spmd call the launch keeps (without optimizations=), its
        name_hint and its split."""
        split = None
        kept = copy.copy(call)
        kept.keywords = []
        for kw in call.keywords:
            if kw.arg == "optimizations":
                split = self._optimizations(kw.value)
            else:
                kept.keywords.append(kw)
        return kept, self._hint(call), split

    def _hint(self, call: ast.Call) -> Optional[str]:
        for kw in call.keywords:
            if kw.arg == "name_hint":
                value = _static(kw.value, self.namespace)
                if not isinstance(value, str) or not value.isidentifier():
                    raise self.error(
                        kw.value, "name_hint must be an identifier known at compile time"
                    )
                return value
        return None

    def _at_args(self, call: ast.Call) -> Tuple[Optional[str], Optional[Split]]:
        level = (
            call.args[0]
            if call.args
            else next((k.value for k in call.keywords if k.arg == "level"), None)
        )
        if level is None:
            raise self.error(call, "pl.at needs level=pl.Level.CORE_GROUP")
        found = _static(level, self.namespace)
        if isinstance(found, Unsupported):
            raise self.error(level, found.message)
        if found is not Level.CORE_GROUP:
            what = f"pl.Level.{found.name}" if isinstance(found, Level) else ast.unparse(level)
            raise self.error(
                level,
                f"pl.at(level={what}) is not supported by blockpipe: it outlines "
                "pl.Level.CORE_GROUP scopes into kernels",
            )
        if len(call.args) > 1:
            raise self.error(
                call.args[1], "pl.at(level, role) is not supported by blockpipe: role="
            )
        split: Optional[Split] = None
        for kw in call.keywords:
            if kw.arg in _AT_UNSUPPORTED:
                raise self.error(kw.value, f"pl.at({kw.arg}=...) is not supported by blockpipe")
            if kw.arg == "optimizations":
                split = self._optimizations(kw.value)
            elif kw.arg not in ("level", "name_hint") + _AT_IGNORED:
                raise self.error(kw.value, f"pl.at has no argument '{kw.arg}'")
        return self._hint(call), split

    def _optimizations(self, node: ast.AST) -> Optional[Split]:
        if not isinstance(node, (ast.List, ast.Tuple)):
            raise self.error(
                node,
                "pl.at's optimizations= must be a list such as [pl.split(pl.SplitMode.UP_DOWN)]",
            )
        from blockpipe.language import ops

        mode: Optional[SplitMode] = None
        slot_num: Optional[int] = None
        seen = set()
        for entry in node.elts:
            op = (
                ops.op_of(_static(entry.func, self.namespace))
                if isinstance(entry, ast.Call)
                else None
            )
            kind = next((k for k in ("split", "cross_core_slot") if op is ops.OPS[k]), None)
            if kind is None:
                raise self.error(
                    entry,
                    "each entry of pl.at's optimizations= must be pl.split(mode) or "
                    "pl.cross_core_slot(slot_num=n)",
                )
            if kind in seen:
                raise self.error(entry, f"pl.at's optimizations= has pl.{kind} twice")
            seen.add(kind)
            if kind == "split":
                mode_node = (
                    entry.args[0]
                    if entry.args
                    else next((k.value for k in entry.keywords if k.arg == "mode"), None)
                )
                mode = _static(mode_node, self.namespace) if mode_node is not None else None
                if not isinstance(mode, SplitMode):
                    raise self.error(entry, "pl.split takes a pl.SplitMode known at compile time")
            elif entry.args:
                raise self.error(entry, "pl.cross_core_slot takes slot_num= as a keyword")
            for kw in entry.keywords:
                if kw.arg == "slot_num":
                    if slot_num is not None:
                        raise self.error(kw.value, "pl.at's optimizations= gives slot_num twice")
                    slot_num = _static(kw.value, self.namespace)
                    if isinstance(slot_num, bool) or not isinstance(slot_num, int) or slot_num <= 0:
                        raise self.error(
                            kw.value, f"pl.{kind}'s slot_num must be a positive integer"
                        )
                elif kw.arg != "mode" or kind != "split":
                    raise self.error(kw.value, f"pl.{kind} has no argument '{kw.arg}'")
            if kind == "cross_core_slot" and slot_num is None:
                raise self.error(entry, "pl.cross_core_slot is missing slot_num=")
        if mode is None and slot_num is None:
            return None
        return Split(mode if mode is not None else SplitMode.NONE, slot_num)
