"""Control flow: `pl.range` loops with the values they carry, `pl.spmd`
blocks, and ifs decided at compile time or at run time."""

from __future__ import annotations

import ast
from typing import Any, Dict, List, Optional, Tuple

from blockpipe.language import ops, valid_shapes
from blockpipe.language.source import assigned_names, assignment_of
from blockpipe.language.transparent_scopes import with_misuse
from blockpipe.language.types import (
    INDEX,
    FunctionType,
    MemorySpace,
    ScalarType,
    TensorType,
    TileType,
)
from blockpipe.language.unsupported import Unsupported
from blockpipe.language.values import (
    KERNEL_KINDS,
    LoweringError,
    PackedMask,
    Value,
    describe,
    is_int,
    joinable,
    joined_by_cast,
    same_type,
    same_value,
)


class ControlFlow:
    """The part of a function's lowering that builds loops and branches."""

    # ------------------------------------------------------------------- loops

    def for_loop(self, stmt: ast.For) -> None:
        if stmt.orelse:
            raise self.error(stmt, "for/else is not supported")
        intrinsic = self.intrinsic_of(stmt.iter)
        values = None
        if intrinsic in (None, "unroll"):
            values = self.unrolled_values(stmt.iter, intrinsic)
        if not isinstance(stmt.target, ast.Name):
            raise self.error(stmt.target, "the loop variable must be a single name")
        if intrinsic == "spmd":
            self.spmd_block(stmt.iter, stmt.body, stmt, loop_var=stmt.target.id)
            return
        if values is not None:
            # Python's range over constants (or pl.unroll's), or a list or
            # tuple of them: the body is repeated once per value, as Python
            # would run it.
            for value in values:
                self.env[stmt.target.id] = value
                self.assigned_at[stmt.target.id] = stmt.target
                self.block(stmt.body)
            return
        if intrinsic == "split_aiv":
            self.split_aiv_region(stmt)
            return
        if intrinsic not in ("range", "parallel", "pipeline"):
            raise self.error(
                stmt.iter,
                "for loops iterate over pl.range(...), pl.spmd(...), or pl.unroll(...), "
                "range(...) or a list of integers known at compile time (unrolled)",
            )
        if self.kind not in KERNEL_KINDS + (FunctionType.Orchestration,):
            raise self.error(
                stmt,
                f"pl.{intrinsic} loops are supported in incore, aic, aiv and orchestration "
                "functions",
            )
        call = stmt.iter
        keywords = list(call.keywords)
        if intrinsic == "pipeline":
            # pypto's ping-pong hint: the loop itself is pl.range's.
            stage = next((k for k in keywords if k.arg == "stage"), None)
            if stage is None:
                raise self.error(
                    call, "pl.pipeline needs stage=, the pipeline depth (a positive integer)"
                )
            if self.static_int(stage.value, "pl.pipeline's stage") <= 0:
                raise self.error(stage.value, "pl.pipeline's stage must be a positive integer")
            keywords.remove(stage)
        if keywords:
            raise self.error(
                keywords[0],
                f"pl.{intrinsic} takes no argument '{keywords[0].arg}'"
                + (
                    " here: write 'for i, (a, b) in pl.range(n, init_values=(x, y)):' "
                    "(or let the body reassign the names it carries)"
                    if keywords[0].arg == "init_values"
                    else ""
                ),
            )
        if not 1 <= len(call.args) <= 3:
            raise self.error(
                call,
                f"pl.{intrinsic} takes 1 to 3 positional arguments: (stop), (start, stop) or "
                "(start, stop, step)",
            )
        bounds = [self.expr(a) for a in call.args]
        if len(bounds) == 1:
            bounds = [0, bounds[0], 1]
        elif len(bounds) == 2:
            bounds = [bounds[0], bounds[1], 1]
        if isinstance(bounds[2], int) and bounds[2] <= 0:
            raise self.error(call, f"pl.range step must be positive, got {bounds[2]}")
        lower, upper, step = (self.index_value(b, a) for b, a in zip(bounds, [call] * 3))

        # The loop variable is the induction value at the start of every
        # iteration, whatever the body assigns it: never carried.
        assigned = [n for n in assigned_names(stmt.body) if n != stmt.target.id]
        key = (self.spec.name, self.source.position(stmt))
        carried, inits = self.loop_carried(stmt, assigned, key)
        handles = self.builder.begin_for(
            lower.handle,
            upper.handle,
            step.handle,
            [v.handle for v in inits],
            self.loc(stmt),
            stmt.target.id,
        )
        outer = dict(self.env)
        self.env[stmt.target.id] = Value(handles[0], ScalarType(INDEX))
        self.bind_carried(carried, inits, handles[1:])
        self.region_depth += 1
        try:
            self.block(stmt.body)
        finally:
            self.region_depth -= 1
        results = self.builder.end_for(self.loop_yields(stmt, carried, inits), self.loc(stmt))
        self.after_loop(stmt, key, assigned, outer, carried, inits, results)
        # Python leaves the last induction value in it; here it has none
        # (a value it held before the loop would be stale).
        self.env.pop(stmt.target.id, None)
        self.out_of_scope[stmt.target.id] = (
            f"'{stmt.target.id}' is the variable of the loop at line {self.source.position(stmt)[0]} and has "
            "no value after it; keep what you need in another name inside the loop"
        )

    def while_loop(self, stmt: ast.While) -> None:
        """`while cond:` as an scf.while: the names the body reassigns are
        carried, the condition is computed from them before every
        iteration, and after the loop they hold their last values."""
        if stmt.orelse:
            raise self.error(stmt, "while/else is not supported")
        if self.kind not in KERNEL_KINDS + (FunctionType.Orchestration,):
            raise self.error(
                stmt,
                "while loops are supported in incore, aic, aiv and orchestration functions, "
                f"not in {self.kind.name} function '{self.spec.name}'",
            )
        for node in ast.walk(ast.Module(body=stmt.body, type_ignores=[])):
            if isinstance(node, (ast.Break, ast.Continue)):
                raise self.error(
                    node,
                    f"'{type(node).__name__.lower()}' in a while loop is not supported; "
                    "put the condition in the while's test",
                )
        assigned = assigned_names(stmt.body)
        key = (self.spec.name, self.source.position(stmt))
        carried, inits = self.loop_carried(stmt, assigned, key)
        outer = dict(self.env)

        self.bind_carried(
            carried, inits, self.builder.begin_while([v.handle for v in inits], self.loc(stmt))
        )
        self.region_depth += 1
        try:
            condition = self.condition(stmt.test)
            if isinstance(condition, bool):
                raise self.error(
                    stmt.test,
                    "a while loop's condition must be known only at run time (it reads a value "
                    "the body changes); use pl.range for a count known at compile time",
                )
            self.bind_carried(
                carried, inits, self.builder.while_body(condition.handle, self.loc(stmt))
            )
            self.block(stmt.body)
        finally:
            self.region_depth -= 1
        results = self.builder.end_while(self.loop_yields(stmt, carried, inits), self.loc(stmt))
        self.after_loop(stmt, key, assigned, outer, carried, inits, results)

    def loop_carried(self, stmt, assigned, key):
        """The names a loop carries, of those its body assigns, and their
        start values: those bound to values or integers before it (an
        integer varies from one iteration to the next: an index value).
        A name first set in the body and read after the loop (found by an
        earlier try at lowering the program) is carried from a start value
        of its type, so that after the loop it holds the last iteration's
        value, as in Python."""
        for name, t in self.program.loop_hints.get(key, {}).items():
            if name in assigned and name not in self.env:
                self.env[name] = self.start_value(t, stmt)
        carried = [
            n for n in assigned if isinstance(self.env.get(n), Value) or is_int(self.env.get(n))
        ]
        for name in assigned:
            if isinstance(self.env.get(name), PackedMask):
                raise self.error(
                    assignment_of(stmt.body, name) or stmt,
                    f"'{name}' holds a packed predicate mask and the loop body reassigns it; "
                    "a loop carries tiles, and blockpipe does not hold a packed mask as one: "
                    "annotate the comparisons with their operands' type to carry their 1/0 "
                    "tiles, or give the mask in the loop a name of its own",
                )
            if isinstance(self.env.get(name), float):
                # Not carried: every iteration would see the value from
                # before the loop, and so would the code after it.
                raise self.error(
                    assignment_of(stmt.body, name) or stmt,
                    f"'{name}' holds the compile-time number {self.env[name]!r} and the loop body "
                    "reassigns it; a loop carries only index values and tiles from one iteration "
                    "to the next: compute it from the loop variable, or keep it in a tile",
                )
        inits = [
            self.index_value(self.env[n], stmt) if is_int(self.env[n]) else self.env[n]
            for n in carried
        ]
        return carried, inits

    def bind_carried(self, carried, inits, handles) -> None:
        """Binds each carried name to its value in a loop's region (or to
        the loop's result): of its start value's type, the same tensor."""
        for name, init, handle in zip(carried, inits, handles):
            self.env[name] = Value(handle, init.type, init.valid)
            self.tensor_roots[handle] = self.root_of(init)

    def loop_yields(self, stmt, carried, inits) -> List[int]:
        """What a loop body yields: each carried name's value at its end, of
        its start value's type."""
        yielded = []
        for name, init in zip(carried, inits):
            value = self.as_value(self.env[name], stmt)
            if joinable(value.type, init.type):
                # A tile whose space is still to be decided meets one whose
                # space is known (a pl.full that a matmul chain carries), or
                # a popped tile whose type is still to be inferred meets a
                # typed one: the cast joins them, the passes decide both.
                (value,) = self.create(
                    "builtin.unrealized_conversion_cast", [value], [init.type], {}, stmt
                )
            elif not same_type(value.type, init.type):
                raise self.error(
                    stmt, f"'{name}' changes type inside the loop, from {init.type} to {value.type}"
                )
            valid_shapes.join(self, name, init, value, stmt)
            yielded.append(value.handle)
        return yielded

    def after_loop(self, stmt, key, assigned, outer, carried, inits, results) -> None:
        """The names after a loop: the carried ones its results; one first
        set in the body the tensor it was stored into, or out of scope
        (remembered, for a later try, when the loop could carry it)."""
        inner_only = {n for n in assigned if n not in outer}
        last = {n: self.env.get(n) for n in inner_only}
        self.env = outer
        self.bind_carried(carried, inits, results)
        for name in inner_only:
            self.env.pop(name, None)
            tensor = self.tensor_after_loop(last.get(name))
            if tensor is not None:
                # A tensor set in the loop (`out = pl.store(t, offs, c)`) is
                # the tensor it was stored into, its stores done in place.
                self.env[name] = tensor
                continue
            message = self.block_local_message(name, stmt)
            self.out_of_scope[name] = message
            value = last.get(name)
            if isinstance(value, Value) and self.can_start(value.type):
                self.loop_values[name] = (key, value.type, message)

    def tensor_after_loop(self, value) -> Optional[Value]:
        """The value after a loop (or an if) of a tensor a name first set
        in its body holds: the same tensor as known outside it (a loop
        result or a parameter), or None."""
        if not (isinstance(value, Value) and isinstance(value.type, TensorType)):
            return None
        root = self.root_of(value)
        for known in self.env.values():
            if isinstance(known, Value) and self.root_of(known) == root:
                return known
        return next((p for p in self.param_values if p.handle == root), None)

    def can_start(self, t) -> bool:
        """Whether a loop can carry a value of type `t` from a start value
        it makes (a scalar, or a Vec or Acc tile)."""
        if isinstance(t, ScalarType):
            return True
        return (
            isinstance(t, TileType)
            and not t.unknown
            and t.space in (None, MemorySpace.Vec, MemorySpace.Acc)
            and not (self.kind is FunctionType.AIC and t.space is not MemorySpace.Acc)
        )

    def start_value(self, t, node) -> Value:
        """A value of type `t` (zero) for a loop to carry from."""
        if isinstance(t, ScalarType):
            return self.constant(0.0 if t.dtype.is_float else 0, t.dtype, node)
        attr = (
            self.float_attr(0.0, t.dtype, node)
            if t.dtype.is_float
            else self.int_attr(0, t.dtype, node)
        )
        (value,) = self.create("bp.full", [], [t], {"value": attr}, node)
        return value

    # Unrolling longer loops would bloat the kernel: use pl.range.
    MAX_UNROLL = 1024

    def unrolled_values(
        self, node: ast.expr, intrinsic: Optional[str] = None
    ) -> Optional[List[int]]:
        """The values of `range(...)` with integer arguments known at compile
        time, or of a list or tuple of such integers; None otherwise. Those
        of `pl.unroll(...)` (intrinsic "unroll"), whose arguments must be
        such integers."""
        if intrinsic == "unroll":
            values = self.unroll_range(node)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "range"
            and "range" not in self.env
            and not node.keywords
        ):
            try:
                args = [self.static(a) for a in node.args]
            except LoweringError:
                return None
            if (
                not args
                or len(args) > 3
                or not all(isinstance(a, int) and not isinstance(a, bool) for a in args)
            ):
                return None
            values = range(*args) if args[-1] != 0 or len(args) < 3 else None
            if values is None:
                raise self.error(node, "range() step must not be zero")
        elif isinstance(node, (ast.List, ast.Tuple)):
            try:
                values = [self.static(e) for e in node.elts]
            except LoweringError:
                return None
            if not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
                return None
        else:
            return None
        if len(values) > self.MAX_UNROLL:
            raise self.error(
                node,
                f"this loop would be unrolled {len(values)} times (at most "
                f"{self.MAX_UNROLL}); use pl.range for a loop that runs on the device",
            )
        return list(values)

    def unroll_range(self, call: ast.Call) -> range:
        """pypto's `pl.unroll(stop)`, `(start, stop)` or `(start, stop,
        step)`: Python's range of integers known at compile time, a step
        other than 0; no init_values (an unrolled loop carries nothing)."""
        if call.keywords:
            keyword = call.keywords[0]
            raise self.error(
                keyword,
                f"pl.unroll takes no argument '{keyword.arg}': the body is repeated at compile "
                "time, and names it reassigns hold their values from one copy to the next",
            )
        if not 1 <= len(call.args) <= 3:
            raise self.error(
                call,
                "pl.unroll takes 1 to 3 positional arguments: (stop), (start, stop) or "
                "(start, stop, step)",
            )
        bounds = []
        for arg in call.args:
            try:
                bounds.append(self.static(arg))
            except LoweringError:
                bounds.append(None)
            if not isinstance(bounds[-1], int) or isinstance(bounds[-1], bool):
                raise self.error(
                    arg,
                    f"pl.unroll's bounds must be integers known at compile time, got "
                    f"{ast.unparse(arg)}; use pl.range for a loop bounded at run time",
                )
        if len(bounds) == 3 and bounds[2] == 0:
            raise self.error(call.args[2], "pl.unroll's step must not be zero")
        return range(*bounds)

    def with_block(self, stmt: ast.With) -> None:
        for item in stmt.items:  # pypto's scopes blockpipe lacks (pl.at)
            scope = item.context_expr
            if isinstance(scope, ast.Call):
                scope = scope.func
            try:
                found = self.static_name(scope)
            except LoweringError:
                continue
            if isinstance(found, Unsupported):
                raise self.error(item.context_expr, found.message)
            if (misuse := with_misuse(item, found)) is not None:
                raise self.error(*misuse)
        if len(stmt.items) == 1 and self.intrinsic_of(stmt.items[0].context_expr) == "at":
            raise self.error(
                stmt,
                "pl.at scopes are outlined at the top level of Opaque and orchestration "
                "functions only",
            )
        if len(stmt.items) != 1 or self.intrinsic_of(stmt.items[0].context_expr) != "spmd":
            raise self.error(stmt, "with blocks are only supported as 'with pl.spmd(core_num):'")
        item = stmt.items[0]
        if item.optional_vars is not None:
            raise self.error(item.optional_vars, "'with pl.spmd(...) as name' is not supported")
        self.spmd_block(item.context_expr, stmt.body, stmt, loop_var=None)

    def spmd_block(self, call: ast.Call, body, stmt, loop_var: Optional[str]) -> None:
        if self.kind is not FunctionType.Orchestration:
            raise self.error(call, "pl.spmd is only valid in orchestration functions")
        if self.spmd_depth:
            raise self.error(call, "pl.spmd blocks cannot be nested")
        spmd = ops.OPS["spmd"]
        bound = self.bind_args("spmd", call, spmd.required, spmd.optional)
        core_num = self.expr(bound["core_num"])
        if isinstance(core_num, int):
            if core_num <= 0:
                raise self.error(bound["core_num"], f"core_num must be positive, got {core_num}")
        elif (
            isinstance(core_num, Value)
            and isinstance(core_num.type, ScalarType)
            and not core_num.type.dtype.is_float
        ):
            core_num = self.index_value(core_num, bound["core_num"])
        else:
            raise self.error(
                bound["core_num"], "core_num must be a positive integer or an index value"
            )
        if bound["optimizations"] is not None:
            raise self.error(
                bound["optimizations"],
                "pl.spmd(optimizations=...) applies to a scope outlined "
                "into a kernel (in an Opaque or @pl.jit function), not to "
                "launches of the program's kernels",
            )
        sync_start = self.static_value(bound["sync_start"], bool, "sync_start")
        name_hint = self.static_value(bound["name_hint"], (str, type(None)), "name_hint")
        self.spmd_depth += 1
        self.spmd_args = (core_num, sync_start, name_hint)
        hidden = self.env.pop(loop_var, None) if loop_var else None
        if loop_var:
            # Each block has its own index, known only inside the kernel.
            self.out_of_scope[loop_var] = (
                f"'{loop_var}', the variable of pl.spmd, has no value in an orchestration function; "
                "the launched kernel reads its block's index with pl.tile.get_block_idx()"
            )
        try:
            self.block(body)
        finally:
            self.spmd_depth -= 1
            self.spmd_args = None
            if loop_var and hidden is not None:
                self.env[loop_var] = hidden

    # ---------------------------------------------------------------- branches

    def if_stmt(self, stmt: ast.If) -> None:
        condition = self.condition(stmt.test)
        if isinstance(condition, bool):
            # Known at compile time: as Python would, run only the branch taken.
            self.block(stmt.body if condition else stmt.orelse)
            return
        if self.kind not in KERNEL_KINDS + (FunctionType.Orchestration,):
            raise self.error(
                stmt,
                "an if whose condition is known only at run time is supported in "
                f"incore, aic, aiv and orchestration functions, not in {self.kind.name} function "
                f"'{self.spec.name}'",
            )
        outer, outer_assigned = dict(self.env), dict(self.assigned_at)
        outer_freed = dict(self.freed)
        self.builder.begin_if(condition.handle, self.loc(stmt))
        self.region_depth += 1
        try:
            self.block(stmt.body)
            then_env, then_assigned = self.env, self.assigned_at
            self.env, self.assigned_at = dict(outer), dict(outer_assigned)
            # Each branch frees pipe slots on its own; after the if, a slot
            # either freed is.
            then_freed, self.freed = self.freed, dict(outer_freed)
            self.builder.enter_branch(True)
            self.block(stmt.orelse)
            else_env, else_assigned = self.env, self.assigned_at
            self.freed = {**then_freed, **self.freed}
        finally:
            self.region_depth -= 1
        self.env, self.assigned_at = dict(outer), dict(outer_assigned)

        # What each name holds after the if: the same value from both
        # branches, or a result of the scf.if that each branch yields.
        merged: List[Tuple[str, Any, Any, ast.AST]] = []
        for name in assigned_names(list(stmt.body) + list(stmt.orelse)):
            then_value, else_value = then_env.get(name), else_env.get(name)
            if then_value is None and else_value is None:
                continue  # local to a block inside a branch
            if then_value is None or else_value is None:
                tensor = self.tensor_after_loop(then_value if else_value is None else else_value)
                if tensor is not None:
                    # A tensor stored into in one branch: the tensor itself
                    # after the if, as after a loop.
                    self.env[name] = tensor
                    self.assigned_at[name] = then_assigned.get(name) or else_assigned.get(name)
                    continue
                self.env.pop(name, None)
                self.out_of_scope[name] = (
                    f"'{name}' is assigned in only one branch of the if at line "
                    f"{self.source.position(stmt)[0]}; assign it before the if, or in both branches, "
                    "to use it after the if"
                )
                continue
            in_else = else_assigned.get(name) is not outer_assigned.get(name)
            node = else_assigned[name] if in_else else then_assigned.get(name, stmt)
            self.assigned_at[name] = node
            if same_value(then_value, else_value):
                self.env[name] = then_value
                continue
            if isinstance(then_value, PackedMask) or isinstance(else_value, PackedMask):
                raise self.error(
                    node,
                    f"'{name}' is a packed predicate mask after only one branch of the if "
                    "(or a different one after each); blockpipe does not hold a packed mask "
                    "as a tile an if can yield: annotate the comparisons with their operands' "
                    "type to join their 1/0 tiles, or select in each branch",
                )
            self.check_branches_agree(
                name,
                then_value,
                else_value,
                node,
                in_then=then_assigned.get(name) is not outer_assigned.get(name),
                in_else=in_else,
            )
            # A tensor stored into in a branch becomes a result too (the
            # same tensor on both sides, checked above): later ops see the
            # stores through it.
            merged.append((name, then_value, else_value, node))

        yielded: Dict[bool, List[Value]] = {False: [], True: []}
        for is_else in (False, True):
            pairs = [(m[2], m[1]) if is_else else (m[1], m[2]) for m in merged]  # (own, other)

            def undecided(own, other) -> bool:
                return (
                    isinstance(own, Value)
                    and isinstance(other, Value)
                    and joinable(own.type, other.type)
                    and joined_by_cast(own.type, other.type)
                )

            builds = any(
                not isinstance(own, Value) or undecided(own, other) for own, other in pairs
            )
            if builds:
                # A literal becomes a constant in its branch, typed like the
                # other branch's value; a tile whose space is still to be
                # decided (or a type still to be inferred) is joined to the
                # other branch's by a cast there.
                self.builder.enter_branch(is_else)
                self.region_depth += 1
            try:
                for (_, _, _, node), (own, other) in zip(merged, pairs):
                    if undecided(own, other):
                        (own,) = self.create(
                            "builtin.unrealized_conversion_cast", [own], [other.type], {}, node
                        )
                    like = other.type if isinstance(other, Value) else None
                    yielded[is_else].append(self.as_value(own, node, like=like))
            finally:
                if builds:
                    self.region_depth -= 1
        # A single result is named after its variable, for generated code.
        results = self.builder.end_if(
            [v.handle for v in yielded[False]],
            [v.handle for v in yielded[True]],
            self.loc(stmt, merged[0][0] if len(merged) == 1 else ""),
        )
        for (name, then_own, else_own, node), then_value, handle in zip(
            merged, yielded[False], results
        ):
            valid = valid_shapes.join(self, name, then_own, else_own, node)
            # Comparisons on both sides: still 1/0 to pl.sel (ops/packed_masks.py).
            predicate = all(getattr(v, "predicate", False) for v in (then_own, else_own))
            self.env[name] = Value(handle, then_value.type, valid, predicate)
            self.tensor_roots[handle] = self.root_of(then_value)

    def check_branches_agree(
        self, name: str, then_value, else_value, node: ast.AST, in_then: bool, in_else: bool
    ) -> None:
        values = [v for v in (then_value, else_value) if isinstance(v, Value)]
        if len(values) == 2:
            agree = same_type(then_value.type, else_value.type) or joinable(
                then_value.type, else_value.type
            )
        else:
            # A literal takes the type of the other branch's scalar.
            agree = not values or isinstance(values[0].type, ScalarType)
            if not values and any(isinstance(v, float) for v in (then_value, else_value)):
                raise self.error(
                    node,
                    f"'{name}' is a float known at compile time that differs between the "
                    "branches of an if decided at run time, so it would need a run-time type: "
                    "pass it as a pl.Scalar[pl.FP32], or keep it in a tile",
                )
        if not agree:
            then_text, else_text = describe(then_value), describe(else_value)
            if in_then and in_else:
                raise self.error(
                    node,
                    f"'{name}' is {then_text} after the if branch but {else_text} after "
                    "the else branch; both branches must leave it the same type",
                )
            before, after = (else_text, then_text) if in_then else (then_text, else_text)
            raise self.error(node, f"'{name}' changes type inside the if, from {before} to {after}")
        if (
            len(values) == 2
            and isinstance(then_value.type, TensorType)
            and (self.root_of(then_value) != self.root_of(else_value))
        ):
            raise self.error(
                node,
                f"'{name}' is a different tensor in each branch of the if; a tensor "
                "assigned in a branch must stay the same tensor (assign it the result "
                "of pl.store into it)",
            )
