"""`@pl.jit`: pypto's function-style entry point.

    @pl.jit.incore
    def add_kernel(a: pl.Tensor[[128, 128], pl.FP32], out: pl.Out[pl.Tensor[[128, 128], pl.FP32]]):
        ...

    @pl.jit
    def add(a: pl.Tensor[[M, 128], pl.FP32], out: pl.Out[pl.Tensor[[M, 128], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP):
            out[:] = pl.add(a, a)
        return out

    add(a, out)          # numpy arrays (or torch CPU tensors): compiled on first call

A `@pl.jit` function is an orchestration: its `pl.at` / `pl.spmd` scopes
become kernels, and it calls the `@pl.jit.incore` (kernel) and
`@pl.jit.opaque` functions it names, found from its body; `@pl.jit.inline`
and plain Python helpers are inlined where they are called. The first call
with given argument shapes and dtypes compiles the program specialized on
them (a dimension annotated with `pl.dynamic("M")`, or named by
`x.bind_dynamic(axis, M)`, stays dynamic) and keeps it in `fn._cache`; a
later call with the same shapes and dtypes runs it again.
"""

from __future__ import annotations

import ast
import copy
import functools
import inspect
import re
import types as _types
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from blockpipe.errors import user_traceback
from blockpipe.language.program import FunctionSpec, Program
from blockpipe.language.source import Source, parse_function, self_calls
from blockpipe.language.types import (
    SHAPELESS,
    NamedDim,
    ParamDirection,
    ParamType,
    ScalarType,
    TensorType,
    dynamic,
    param_annotation,
)
from blockpipe.language.unsupported import unsupported_in

_KINDS = ("entry", "incore", "opaque")


class JitFunction:
    """A function decorated with `@pl.jit` (kind "entry"), `@pl.jit.incore`
    or `@pl.jit.opaque`."""

    def __init__(self, fn: Callable, kind: str):
        functools.update_wrapper(self, fn)
        self._fn = fn
        self._kind = kind
        # (argument shapes and dtypes) -> CompiledProgram.
        self._cache: Dict[tuple, Any] = {}
        self.__bp_jit_name__ = fn.__name__

    def __repr__(self) -> str:
        decorator = "@pl.jit" if self._kind == "entry" else f"@pl.jit.{self._kind}"
        return f"<{decorator} function {self._fn.__name__}>"

    # ------------------------------------------------------------ calling

    @user_traceback
    def __call__(self, *args, config: Any = None, **kwargs):
        """Runs the function on numpy arrays (or torch CPU tensors) and
        scalars, by position or by parameter name; Out/InOut arguments are
        written in place and returned. pypto's `config=` (a RunConfig,
        unless the function has a parameter of that name) is accepted:
        blockpipe runs on cpu-sim."""
        from blockpipe import interpreter

        if self._kind != "entry":
            if interpreter.runner.interpreting():  # a kernel called while interpreted
                return interpreter.runner.kernel_call(self._fn.__name__, self._fn, args)
            raise TypeError(
                f"'{self._fn.__name__}' is a @pl.jit.{self._kind} function: call it from a "
                "@pl.jit function"
            )
        if config is not None and any(name == "config" for name, _ in self._params()):
            kwargs["config"] = config
        args = self._by_position(args, kwargs)
        arrays = [_as_array(a, i) for i, a in enumerate(args)]
        if interpreter.enabled():
            interpreter.run_jit(self, arrays)
        else:
            self._compiled(arrays).run(self._fn.__name__, *arrays)
        outs = [args[i] for i, d in enumerate(self._directions()) if d is not ParamDirection.In]
        if not outs:
            return None
        return outs[0] if len(outs) == 1 else tuple(outs)

    @user_traceback
    def compile(self, *args, **kwargs):
        """The CompiledProgram for these arguments (or, without any, for
        the annotations alone, which must then give every parameter)."""
        args = self._by_position(args, kwargs) if kwargs else args
        arrays = [_as_array(a, i) for i, a in enumerate(args)] if args else None
        return self._compiled(arrays)

    @user_traceback
    def lower(self, *args, **kwargs):
        """pypto's `fn.lower(*args)`: the program for these arguments taken
        through the compiler's passes, neither built nor run. Returns a
        LoweredProgram: `.functions` maps each function's name to its
        `.name` and `.func_type` (a pl.FunctionType), `.ir` is the IR after
        the last pass."""
        from blockpipe.compiler import compile_to_cpp

        args = self._by_position(args, kwargs) if kwargs else args
        arrays = [_as_array(a, i) for i, a in enumerate(args)] if args else None
        params = self._params()
        if arrays is not None and len(arrays) != len(params):
            raise TypeError(
                f"'{self._fn.__name__}' takes {len(params)} arguments, got {len(arrays)}"
            )
        program = self._program(self._specialize(params, arrays))
        _, _, passes = compile_to_cpp(program, "cpu-sim", capture=True)
        return LoweredProgram(passes[-1][1])

    def _by_position(self, args: tuple, kwargs: dict) -> tuple:
        """`args` with the arguments given by name in their parameters'
        places, checked as a compiled program's call checks them: a
        ValueError naming a parameter the function does not have, one
        given twice, or one left without a value."""
        if not kwargs:
            return args
        from blockpipe.compiler import bind_by_name

        names = [name for name, _ in self._params()]
        return bind_by_name(f"'{self._fn.__name__}'", names, args, kwargs, excess=TypeError)

    def _compiled(self, arrays: Optional[list]):
        from blockpipe.compiler import compile as compile_program

        params = self._params()
        if arrays is not None and len(arrays) != len(params):
            raise TypeError(
                f"'{self._fn.__name__}' takes {len(params)} arguments "
                f"({', '.join(p for p, _ in params)}), got {len(arrays)}"
            )
        types_ = self._specialize(params, arrays)
        key = tuple(_key(t) for t in types_)
        compiled = self._cache.get(key)
        if compiled is None:
            compiled = self._cache[key] = compile_program(self._program(types_), quiet=True)
        return compiled

    # ---------------------------------------------------- specialization

    def _source(self) -> Source:
        return parse_function(FunctionSpec(self._fn, None), _file_of(self._fn))

    def _params(self) -> List[Tuple[str, Any]]:
        """Each parameter's name and annotation (None where it has none)."""
        source = self._source()
        annotations = _annotations(self._fn)
        args = source.tree.args
        if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs or args.defaults:
            raise source.error(
                source.tree,
                f"@pl.jit function '{self._fn.__name__}' takes plain positional parameters only",
            )
        return [(a.arg, annotations.get(a.arg)) for a in args.args]

    def _directions(self) -> List[ParamDirection]:
        return [
            ann.direction if isinstance(ann, ParamType) else ParamDirection.In
            for _, ann in self._params()
        ]

    def _bound_dynamic(self) -> Dict[str, Dict[int, Optional[str]]]:
        """The `x.bind_dynamic(axis, M)` statements of the body: per
        parameter, its dynamic axes and their names."""
        source = self._source()
        found: Dict[str, Dict[int, Optional[str]]] = {}
        for node in ast.walk(source.tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "bind_dynamic"
                and isinstance(node.func.value, ast.Name)
                and len(node.args) == 2
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, int)
            ):
                var = _evaluate_name(node.args[1], source.globals)
                name = var.name if isinstance(var, NamedDim) else None
                found.setdefault(node.func.value.id, {})[node.args[0].value] = name
        return found

    def _specialize(self, params, arrays: Optional[list]) -> List[Any]:
        """Each parameter's type for these arguments: the annotation with
        its static dims checked against the argument's, its dynamic ones
        kept; the argument's own shape and dtype where there is no
        annotation."""
        from blockpipe.compiler import array_dtype_names, dtype_of_array

        bound = self._bound_dynamic()
        types_ = []
        for index, (pname, ann) in enumerate(params):
            direction = ParamDirection.In
            ann = param_annotation(ann)
            found = unsupported_in(ann)
            if found is not None:  # such as a dtype blockpipe lacks
                source = self._source()
                param = source.tree.args.args[index]
                raise source.error(param.annotation or param, found.message)
            if isinstance(ann, ParamType):
                direction, ann = ann.direction, ann.inner
            if ann is SHAPELESS:  # `pl.Tensor`: the argument's shape and dtype
                ann = None
                if arrays is None:
                    raise TypeError(
                        f"parameter '{pname}' of '{self._fn.__name__}' is a pl.Tensor without "
                        "shape: compile it with arguments, or annotate its shape and dtype"
                    )
                if not isinstance(arrays[index], np.ndarray):
                    raise TypeError(
                        f"parameter '{pname}' of '{self._fn.__name__}' is a pl.Tensor, got "
                        f"{type(arrays[index]).__name__}"
                    )
            arg = arrays[index] if arrays is not None else None
            where = f"parameter '{pname}' of '{self._fn.__name__}'"
            if isinstance(ann, ScalarType) or (
                ann is None and arg is not None and not isinstance(arg, np.ndarray)
            ):
                if ann is None:
                    raise TypeError(
                        f"{where} takes a scalar: annotate it, e.g. pl.Scalar[pl.INT64]"
                    )
                if arg is not None and isinstance(arg, np.ndarray):
                    raise TypeError(f"{where} is {ann}, got an array")
                types_.append(ann)
                continue
            if ann is not None and not isinstance(ann, TensorType):
                raise TypeError(f"{where} has unsupported annotation {ann!r}")
            if arg is not None and not isinstance(arg, np.ndarray):
                raise TypeError(f"{where} is a tensor, got {type(arg).__name__}")
            if ann is None and arg is None:
                raise TypeError(
                    f"{where} has no annotation: compile it with arguments, or annotate it"
                )
            if arg is not None:
                # Worded as a compiled program's call words it (the
                # runtime's ArgCheck): numpy's names, the one it takes.
                dtype = dtype_of_array(arg)
                if ann is not None and ann.dtype is not dtype:
                    raise ValueError(f"{where} must have dtype {ann.dtype.numpy}, got {arg.dtype}")
                if dtype is None or dtype.name == "BOOL":  # flags are scalars only
                    raise ValueError(
                        f"{where} must have one of the dtypes "
                        f"{', '.join(array_dtype_names())}, got {arg.dtype}"
                    )
                if ann is not None and len(ann.shape) != arg.ndim:
                    raise TypeError(
                        f"{where} is {len(ann.shape)}-D but the argument has shape "
                        f"{list(arg.shape)}"
                    )
            else:
                dtype = ann.dtype
            rank = len(ann.shape) if ann is not None else arg.ndim
            names = list(ann.dim_names) if ann is not None and ann.dim_names else [None] * rank
            dynamic_axes = {
                a % rank: n for a, n in bound.get(pname, {}).items() if -rank <= a < rank
            }
            shape = []
            for axis in range(rank):
                declared = ann.shape[axis] if ann is not None else None
                if axis in dynamic_axes or declared is dynamic:
                    shape.append(dynamic)
                    names[axis] = names[axis] or dynamic_axes.get(axis)
                    continue
                if arg is not None and declared is not None and declared != arg.shape[axis]:
                    raise ValueError(
                        f"{where}: dimension {axis} is {declared} in its annotation but "
                        f"{arg.shape[axis]} in the argument"
                    )
                shape.append(int(arg.shape[axis]) if arg is not None else declared)
            tensor = TensorType(tuple(shape), dtype, tuple(names) if any(names) else ())
            types_.append(
                tensor if direction is ParamDirection.In else ParamType(direction, tensor)
            )
        return types_

    def _program(self, types_: List[Any]) -> Program:
        """A program of this function (with these parameter types) and the
        @pl.jit.incore / opaque functions it reaches."""
        functions: Dict[str, FunctionSpec] = {}
        order: List[JitFunction] = []
        pending = [self]
        while pending:
            jf = pending.pop()
            if jf in order:
                continue
            order.append(jf)
            pending += [d for d in jf._callees() if d not in order]
        source_file = _file_of(self._fn)
        for jf in reversed(order):  # callees first
            source = jf._source()
            if jf is self:
                annotations = {p: t for (p, _), t in zip(jf._params(), types_)}
            else:
                annotations = {p: a for p, a in jf._params()}
            functions[jf._fn.__name__] = jf._spec(source, annotations)
        cls = type(self._fn.__name__, (), {})
        return Program(self._fn.__name__, cls, functions, source_file, {})

    def _callees(self) -> List[JitFunction]:
        source = self._source()
        found = []
        for node in ast.walk(source.tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                target = source.globals.get(node.func.id)
                if (
                    isinstance(target, JitFunction)
                    and target._kind != "entry"
                    and target not in found
                ):
                    found.append(target)
        return found

    def _spec(self, source: Source, annotations: Dict[str, Any]) -> FunctionSpec:
        """The FunctionSpec of a method `name(self, ...)` with this body, its
        calls of @pl.jit functions made calls of the program's functions."""
        from blockpipe.language.types import FunctionType

        tree = copy.deepcopy(source.tree)
        tree.decorator_list = []
        first = ast.arg("self")
        ast.copy_location(first, tree)
        tree.args.args.insert(0, first)
        callees = {jf._fn.__name__ for jf in self._callees()}
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in callees
            ):
                attr = ast.Attribute(
                    value=ast.Name("self", ast.Load()), attr=node.func.id, ctx=ast.Load()
                )
                for n in ast.walk(attr):
                    ast.copy_location(n, node.func)
                node.func = attr
        calls = tuple(self_calls(tree))
        has_scope = any(isinstance(n, (ast.With, ast.For)) for n in ast.walk(tree))
        kind = {"incore": FunctionType.InCore, "opaque": FunctionType.Opaque}.get(self._kind)
        if kind is None:  # the entry: an orchestration whose scopes become kernels
            kind = (
                FunctionType.Opaque
                if has_scope and _outlines(tree, source.globals)
                else FunctionType.Orchestration
            )
        pyfunc = _types.SimpleNamespace(__name__=self._fn.__name__, __annotations__=annotations)
        spec = FunctionSpec(pyfunc, kind)
        spec.source = Source(
            tree,
            source.file,
            source.line_offset,
            source.col_offset,
            source.globals,
            calls,
            source.pops,
        )
        return spec


class LoweredProgram:
    """What `fn.lower(*args)` returns: the functions of the compiled
    program (after the passes: a mixed kernel is its AIC, AIV and group
    functions) and its IR."""

    _FUNCTION = re.compile(r"func\.func @(\w+)\(.*bp\.kind = #bp<kind (\w+)>")

    def __init__(self, ir: str):
        from blockpipe.language.types import FunctionType

        self.ir = ir
        self.functions: Dict[str, Any] = {}
        for line in ir.splitlines():
            found = self._FUNCTION.search(line)
            if found:
                name, kind = found.groups()
                self.functions[name] = _types.SimpleNamespace(
                    name=name, func_type=FunctionType(kind)
                )

    def __repr__(self) -> str:
        kinds = ", ".join(f"{n}: {f.func_type.name}" for n, f in self.functions.items())
        return f"<lowered program ({kinds})>"


def _outlines(tree: ast.FunctionDef, namespace: Dict[str, Any]) -> bool:
    """Whether the body has a pl.at or pl.spmd scope to outline."""
    from blockpipe.language import ops
    from blockpipe.language.outline import _launches_only

    for node in ast.walk(tree):
        expr = None
        if isinstance(node, ast.With) and len(node.items) == 1:
            expr = node.items[0].context_expr
        elif isinstance(node, ast.For):
            expr = node.iter
        if isinstance(expr, ast.Call):
            op = ops.op_of(_evaluate_name(expr.func, namespace))
            if op is not None and (
                op.qualname == "at" or op.qualname == "spmd" and not _launches_only(node.body)
            ):
                return True
    return False


def _evaluate_name(node: ast.AST, namespace: Dict[str, Any]):
    if isinstance(node, ast.Name):
        return namespace.get(node.id)
    if isinstance(node, ast.Attribute):
        base = _evaluate_name(node.value, namespace)
        return getattr(base, node.attr, None) if base is not None else None
    if isinstance(node, ast.Call):
        func = _evaluate_name(node.func, namespace)
        if func is dynamic and node.args and isinstance(node.args[0], ast.Constant):
            return dynamic(node.args[0].value)
    return None


def _annotations(fn: Callable) -> Dict[str, Any]:
    annotations = dict(getattr(fn, "__annotations__", {}))
    for name, ann in annotations.items():
        if isinstance(ann, str):  # from __future__ import annotations
            try:
                annotations[name] = eval(ann, dict(fn.__globals__))  # the user's own annotation
            except Exception:  # noqa: BLE001 - the lowering reports it at the parameter
                pass
    return annotations


def _file_of(fn: Callable) -> str:
    try:
        return inspect.getsourcefile(fn) or "<unknown>"
    except (TypeError, OSError):
        return "<unknown>"


def _key(t) -> tuple:
    if isinstance(t, ParamType):
        return (t.direction.name,) + _key(t.inner)
    if isinstance(t, TensorType):
        return (
            "tensor",
            t.dtype.name,
            tuple(None if d is dynamic else d for d in t.shape),
            t.dim_names,
        )
    return ("scalar", str(t))


def _as_array(arg, index: int):
    """A numpy array for a torch CPU tensor (sharing its memory: outputs
    written in place reach the tensor), else the argument itself."""
    if type(arg).__module__.startswith("torch") and hasattr(arg, "numpy"):
        if getattr(arg, "device", None) is not None and str(arg.device) != "cpu":
            raise ValueError(
                f"argument {index} is a torch tensor on {arg.device}; blockpipe's cpu-sim "
                "takes CPU tensors"
            )
        if not arg.is_contiguous():
            raise ValueError(
                f"argument {index} is a non-contiguous torch tensor; pass .contiguous()"
            )
        if str(arg.dtype) == "torch.bfloat16":
            import ml_dtypes
            import torch

            return arg.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
        return arg.numpy()
    return arg


class _Jit:
    """`pl.jit` and its helpers' decorators."""

    def __call__(self, fn: Callable) -> JitFunction:
        return JitFunction(fn, "entry")

    def incore(self, fn: Callable) -> JitFunction:
        """A kernel (InCore function) a @pl.jit function calls by name."""
        return JitFunction(fn, "incore")

    def opaque(self, fn: Callable) -> JitFunction:
        """A function whose pl.at / pl.spmd scopes become kernels, called by
        name from a @pl.jit function."""
        return JitFunction(fn, "opaque")

    def inline(self, fn: Callable) -> Callable:
        """A helper inlined where it is called (as plain Python functions are)."""
        return inline(fn)

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        from blockpipe.language.unsupported import Unsupported

        return Unsupported(f"pl.jit.{name}")


def inline(fn: Callable) -> Callable:
    """`@pl.inline`: a helper whose body is inlined where a blockpipe function
    calls it (plain Python functions are inlined the same way)."""
    if not isinstance(fn, _types.FunctionType):
        raise TypeError(f"@pl.inline decorates a function, got {fn!r}")
    fn.__bp_inline__ = True
    return fn


jit = _Jit()
