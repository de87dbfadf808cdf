"""A tensor parameter's valid shape: `pl.Tensor[[Q, B], pl.FP32,
pl.TensorView(valid_shape=[Q, V], layout=pl.TensorLayout.ND)]`.

pypto's TensorView.valid_shape is the part of the tensor that holds data
(its leading rows and columns). A load reads only data: the valid shape of
a window at `offsets` is the tensor's cut to the window, min(max(valid -
offset, 0), size) per dim. A load that gives its own valid_shape keeps it,
unless the tensor's is provably smaller, which blockpipe can tell when both
are numbers. The sizes are numbers or `pl.dynamic` names; a name is known
in the function when one of its tensor parameters has a dim of that name
(its extent at run time). A load without valid_shape of a tensor whose valid
size is not known is an error: give the load one.
"""

from __future__ import annotations

import ast
import numbers
from typing import Optional, Tuple, Union

from blockpipe.language.types import NamedDim, TensorLayout, TensorType, TensorView

# A declared size: a number, a pl.dynamic name, or None (known only as an
# expression of dynamic dims, `M * 2`, which blockpipe does not compute).
Declared = Union[int, str, None]


def _view_node(annotation: Optional[ast.AST]) -> Optional[ast.AST]:
    """The pl.TensorView(...) call in a parameter's annotation, if it is
    written there."""
    for node in ast.walk(annotation) if annotation is not None else ():
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name == "TensorView":
                return node
    return None


def declared(cx, t: TensorType, annotation: Optional[ast.AST], param: ast.AST):
    """The valid shape `t`'s pl.TensorView declares, checked (pypto's rules:
    layout= given, ND only here; one size per dim, within it); None when it
    declares none."""
    view: Optional[TensorView] = t.view
    if view is None:
        return None
    node = _view_node(annotation) or annotation or param

    def keyword(name):
        found = next((k.value for k in getattr(node, "keywords", ()) if k.arg == name), None)
        return found or node

    if view.stride is not None:
        raise cx.error(keyword("stride"), "pl.TensorView(stride=...) is not supported by blockpipe")
    if view.pad is not None and getattr(view.pad, "name", view.pad) != "null":
        raise cx.error(keyword("pad"), "pl.TensorView(pad=...) is not supported by blockpipe")
    if view.layout is None:
        if view.valid_shape is None:
            return None
        raise cx.error(node, "pl.TensorView needs layout= when valid_shape is given")
    if view.layout is not TensorLayout.ND:
        name = (
            f"pl.TensorLayout.{view.layout.name}"
            if isinstance(view.layout, TensorLayout)
            else repr(view.layout)
        )
        raise cx.error(
            keyword("layout"),
            f"pl.TensorView(layout={name}) is not supported by blockpipe: its tensors are "
            "pl.TensorLayout.ND (row-major)",
        )
    if view.valid_shape is None:
        return None
    sizes = view.valid_shape
    at = keyword("valid_shape")
    if not isinstance(sizes, (list, tuple)) or len(sizes) != len(t.shape):
        count = len(sizes) if isinstance(sizes, (list, tuple)) else "no"
        raise cx.error(
            at,
            f"pl.TensorView's valid_shape has {count} dimensions but the tensor has {len(t.shape)}",
        )
    out = []
    for size, dim in zip(sizes, t.shape):
        if isinstance(size, NamedDim):
            out.append(size.name)
        elif isinstance(size, numbers.Integral) and not isinstance(size, bool):
            if size < 0 or (isinstance(dim, int) and size > dim):
                raise cx.error(
                    at,
                    f"pl.TensorView's valid_shape size {size} is outside [0, {dim}] "
                    f"(the tensor is {list(t.shape)})",
                )
            out.append(int(size))
        elif type(size).__name__ == "CompositeDim":
            out.append(None)
        else:
            raise cx.error(
                at,
                f"pl.TensorView's valid_shape sizes are numbers or pl.dynamic names, got {size!r}",
            )
    return tuple(out)


def _size(cx, size: Declared, node):
    """A declared size as a number or an index value; None when it is not
    known in this function."""
    if size is None or isinstance(size, int):
        return size
    for index, _, names in cx.program.named_dims.get(cx.spec.name, ()):
        if size in names:
            param = cx.param_values[index]
            (extent,) = cx.create(
                "bp.dim", [param], None, {"index": cx.builder.i64(names.index(size))}, node
            )
            return extent
    return None


def narrow(cx, t, first, dims, requested: Optional[Tuple], node):
    """The valid shape of a load of the window `dims` at `first` of the
    tensor `t`: `requested` (the load's valid_shape, or None) with the
    tensor's declared one applied as pypto does (see the module)."""
    from blockpipe.language.valid_shapes import cut, known

    view = cx.tensor_views.get(t.handle)
    if view is None:
        return requested
    out = []
    for i, (size, offset, dim) in enumerate(zip(view, first, dims)):
        asked = requested[i] if requested is not None else None
        value = _size(cx, size, node)
        if value is None:
            if asked is None:
                raise cx.error(
                    node,
                    f"this load reads dim {i} of a tensor whose pl.TensorView valid size "
                    f"{size or 'expression'} is not known in '{cx.spec.name}' (no tensor "
                    "parameter has a dim of that name): give the load a valid_shape",
                )
            out.append(asked)
            continue
        v, o = known(cx, value), known(cx, offset)
        if v is not None and o is not None:
            available = min(max(v - o, 0), dim)
            a = known(cx, asked) if asked is not None else None
            if asked is None or a is not None:
                out.append(available if asked is None else min(available, a))
            else:
                out.append(asked)  # not provably narrower: pypto keeps the request
            continue
        if asked is not None:
            out.append(asked)
            continue
        out.append(cut(cx, value, offset, dim, node))
    return tuple(out)
