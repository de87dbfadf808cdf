"""`for lane in pl.split_aiv(2, mode=...)` regions of an InCore kernel:
the kernel's split taken from them, each region's body lowered with its
lane (the AIV sub-block index)."""

from __future__ import annotations

import ast
from typing import List, Tuple

from blockpipe.language.types import FunctionType, SplitMode
from blockpipe.language.values import LoweringError


class SplitRegions:
    """The part of a function's lowering that reads pl.split_aiv regions."""

    def split_aiv_mode(self, call: ast.Call) -> SplitMode:
        """The mode of `pl.split_aiv(2, mode=...)`, checked."""
        args = dict(zip(("n", "mode"), call.args))
        for kw in call.keywords:
            if kw.arg not in ("n", "mode") or kw.arg in args:
                raise self.error(kw, f"pl.split_aiv takes (n, mode=), not '{kw.arg}'")
            args[kw.arg] = kw.value
        if len(call.args) > 2 or set(args) != {"n", "mode"}:
            raise self.error(
                call, "pl.split_aiv takes (n, mode=): pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN)"
            )
        if self.static_int(args["n"], "pl.split_aiv's n") != 2:
            raise self.error(
                args["n"], "pl.split_aiv's n must be 2, the AIV sub-blocks of a core group"
            )
        mode = self.static(args["mode"])
        if not isinstance(mode, SplitMode):
            raise self.error(
                args["mode"], f"pl.split_aiv's mode must be a pl.SplitMode, got {mode!r}"
            )
        return mode

    def split_aiv_regions(self, body) -> List[Tuple[ast.For, SplitMode]]:
        """Every `for ... in pl.split_aiv(...)` region of a function body,
        with its mode, in order."""
        found = []
        for stmt in body:
            for node in ast.walk(stmt):
                if isinstance(node, ast.For) and self.intrinsic_of(node.iter) == "split_aiv":
                    try:
                        found.append((node, self.split_aiv_mode(node.iter)))
                    except LoweringError:
                        pass  # reported where the body reaches it
        return found

    def split_aiv_region(self, stmt: ast.For) -> None:
        if self.kind is not FunctionType.InCore:
            raise self.error(
                stmt,
                "pl.split_aiv regions are written in pl.at(level=pl.Level.CORE_GROUP) scopes "
                f"and InCore kernels, not in {self.kind.name} function '{self.spec.name}'",
            )
        if self.lane is not None:
            raise self.error(stmt, "pl.split_aiv regions do not nest")
        mode = self.split_aiv_mode(stmt.iter)
        if id(stmt) not in self.region_loops:
            # The kernel's split is set when its body is first read.
            raise self.error(
                stmt,
                "a pl.split_aiv region must be written in the kernel's own body, not in a "
                "helper function it calls",
            )
        name = stmt.target.id
        self.lane = mode
        try:
            (lane,) = self.create("bp.get_subblock_idx", [], None, {}, stmt.target, name)
            self.lane_value = lane
            self.env[name] = lane
            self.assigned_at[name] = stmt.target
            self.block(stmt.body)
        finally:
            self.lane = None
            self.lane_value = None
        self.env.pop(name, None)
        self.out_of_scope[name] = (
            f"'{name}' is the lane of the pl.split_aiv region at line {self.source.position(stmt)[0]} and has "
            "no value after it"
        )
