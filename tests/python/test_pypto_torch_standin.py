"""The NumPy stand-in for torch that `pypto-test` gives pypto's tests when
torch is not installed: each function and tensor method the tests call,
checked against NumPy computed here (torch's dtypes and argument names)."""

import ml_dtypes
import numpy as np
import pytest

from blockpipe.pypto import torch_standin as torch

RNG = np.random.default_rng(7)
A = RNG.standard_normal((4, 6)).astype(np.float32)
B = RNG.standard_normal((4, 6)).astype(np.float32)


def t(array):
    return torch.from_numpy(np.array(array))


def same(got, want):
    assert isinstance(got, np.ndarray) and isinstance(got, torch.Tensor), type(got)
    assert got.dtype == np.asarray(want).dtype, (got.dtype, np.asarray(want).dtype)
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64), rtol=1e-6)


def test_dtypes_are_numpy_dtypes_with_torch_names():
    assert torch.float32 == torch.float == np.float32 and torch.int64 == torch.long == np.int64
    assert torch.bfloat16 == np.dtype(ml_dtypes.bfloat16) and torch.uint8 == np.uint8
    assert isinstance(torch.int16, torch.dtype) and torch.bool == np.bool_
    assert torch.iinfo(torch.int32).max == 2**31 - 1


def test_dtypes_answer_torchs_questions():
    floats = (torch.float32, torch.float16, torch.bfloat16, torch.float64)
    assert all(d.is_floating_point and d.is_signed for d in floats)
    assert not any(d.is_floating_point for d in (torch.int32, torch.uint8, torch.bool))
    assert torch.int8.is_signed and not torch.uint8.is_signed and not torch.bool.is_signed
    assert [d.itemsize for d in (torch.float16, torch.bfloat16, torch.int64)] == [2, 2, 8]
    assert repr(torch.float16) == "torch.float16" and repr(torch.long) == "torch.int64"
    assert torch.iinfo(torch.int16).min == -(2**15) and torch.iinfo(torch.uint8).max == 255
    assert torch.finfo(torch.float16).eps == np.finfo(np.float16).eps
    assert torch.finfo(torch.bfloat16).max == ml_dtypes.finfo(ml_dtypes.bfloat16).max
    with pytest.raises(ValueError):
        torch.iinfo(torch.float32)


def test_dtypes_hash_and_compare_as_numpy_dtypes():
    assert np.dtype(np.float32) == torch.float32 and np.float16 == torch.half
    assert torch.float32 != torch.float16 and torch.int32 != np.int64 and torch.int8 != "x"
    assert {np.dtype(np.int32): "i"}[torch.int32] == "i"
    assert {torch.bfloat16: "b"}[np.dtype(ml_dtypes.bfloat16)] == "b"
    assert len({torch.float, torch.float32, np.dtype(np.float32)}) == 1


def test_dtypes_are_numpy_dtype_arguments():
    assert np.zeros(2, torch.float16).dtype == np.float16
    assert np.arange(3).astype(torch.bfloat16).dtype == ml_dtypes.bfloat16
    assert np.dtype(torch.uint16) == np.uint16 and np.dtype(torch.int16).kind == "i"
    assert np.issubdtype(torch.float32, np.floating)
    assert torch.int32.kind == "i" and torch.float64.type is np.float64


def test_tensors_report_torch_dtypes():
    x = torch.zeros(2, 3, dtype=torch.float16)
    assert x.dtype is torch.float16 and x.dtype.is_floating_point
    assert np.asarray(x).dtype == np.float16 and type(np.asarray(x).dtype) is not torch.dtype
    assert t(A).int().dtype is torch.int32 and t(A).to(torch.bfloat16).dtype is torch.bfloat16
    assert t(A).to(np.dtype(np.float64)).dtype is torch.float64
    assert x.view(torch.int16).dtype is torch.int16
    assert t(np.zeros(2, np.uint32)).dtype is torch.uint32
    # A dtype torch lacks reports NumPy's name.
    assert repr(t(np.zeros(2, np.complex64)).dtype) == "torch.complex64"


def test_factories_take_torch_shapes_and_default_dtypes():
    same(torch.zeros(2, 3), np.zeros((2, 3), np.float32))
    same(torch.zeros([2, 3], dtype=torch.int32), np.zeros((2, 3), np.int32))
    same(torch.ones((2,)), np.ones(2, np.float32))
    same(torch.full((2, 2), 3.5), np.full((2, 2), 3.5, np.float32))
    same(torch.full((2, 2), 3), np.full((2, 2), 3, np.int64))
    same(torch.full((2, 2), 3, dtype=torch.float16), np.full((2, 2), 3, np.float16))
    same(torch.zeros_like(t(A)), np.zeros_like(A))
    same(torch.ones_like(t(A), dtype=torch.int8), np.ones(A.shape, np.int8))
    same(torch.full_like(t(A), 2.0), np.full_like(A, 2.0))
    same(torch.arange(5), np.arange(5, dtype=np.int64))
    same(torch.arange(4, -1, -1, dtype=torch.int32), np.arange(4, -1, -1, dtype=np.int32))
    same(torch.arange(3.0), np.arange(3.0, dtype=np.float32))
    same(torch.eye(3), np.eye(3, dtype=np.float32))
    same(torch.tensor([1.5, 2.0]), np.array([1.5, 2.0], np.float32))
    same(torch.tensor([[1, 2]]), np.array([[1, 2]], np.int64))
    same(torch.tensor(0.0), np.array(0.0, np.float32))
    same(torch.as_tensor([1, 2], dtype=torch.int16), np.array([1, 2], np.int16))


def test_random_factories_are_seeded_with_torch_shapes_and_ranges():
    torch.manual_seed(3)
    first = torch.randn(3, 4)
    torch.manual_seed(3)
    assert np.array_equal(first, torch.randn((3, 4))) and first.dtype == np.float32
    assert torch.rand(100).min() >= 0 and torch.rand(100).max() < 1
    assert torch.randn(2, 2, dtype=torch.bfloat16).dtype == torch.bfloat16
    ints = torch.randint(-4, 5, (50,), dtype=torch.int32)
    assert ints.dtype == np.int32 and ints.min() >= -4 and ints.max() <= 4
    assert torch.randint(3, (10,)).dtype == np.int64 and torch.randint(3, (10,)).max() < 3
    generator = torch.Generator().manual_seed(1)
    again = torch.Generator().manual_seed(1)
    assert np.array_equal(
        torch.randint(0, 16, (4,), generator=generator), torch.randint(0, 16, (4,), generator=again)
    )
    assert sorted(torch.randperm(6, dtype=torch.int32).tolist()) == list(range(6))


def test_conversions_and_copies():
    x = t(A)
    same(x.float(), A)
    same(x.half(), A.astype(np.float16))
    same(x.bfloat16(), A.astype(ml_dtypes.bfloat16))
    same(x.to(torch.int32), A.astype(np.int32))
    same(x.to(dtype=torch.float64), A.astype(np.float64))
    same(x.int(), A.astype(np.int32))
    same(x.long(), A.astype(np.int64))
    copy = x.clone()
    copy[0, 0] = 99
    assert x[0, 0] != 99
    assert x.contiguous() is x and x.numpy().dtype == np.float32
    assert t([[2.5]]).item() == 2.5 and x.is_contiguous() and x.cpu() is x


def test_shapes():
    x = t(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    assert x.size() == (2, 3, 4) and x.size(1) == 3 and x.size == 24 and x.dim() == 3
    assert x.numel() == 24 and np.size(x) == 24
    same(x.view(6, 4), x.numpy().reshape(6, 4))
    same(x.view(torch.int32), x.numpy().view(np.int32))
    same(x.reshape(-1), x.numpy().reshape(-1))
    same(x.reshape((4, 6)), x.numpy().reshape(4, 6))
    same(x.flatten(), x.numpy().reshape(-1))
    same(x.flatten(1), x.numpy().reshape(2, 12))
    same(x.unsqueeze(0), x.numpy()[None])
    same(x[:, :1].squeeze(1), x.numpy()[:, 0])
    same(x.permute(2, 0, 1), x.numpy().transpose(2, 0, 1))
    same(x.transpose(0, 2), np.swapaxes(x.numpy(), 0, 2))
    same(np.transpose(x), x.numpy().T)
    same(t(A).t(), A.T)
    same(t(A).T, A.T)
    same(t(A[:1]).expand(4, -1), np.broadcast_to(A[:1], (4, 6)))
    same(t(A[:1]).expand_as(t(A)), np.broadcast_to(A[:1], A.shape))
    same(t(A).repeat(2, 1), np.tile(A, (2, 1)))
    same(np.repeat(t(A), 2, axis=0), np.repeat(A, 2, axis=0))
    parts = t(A).split(4, dim=1)
    assert [p.shape for p in parts] == [(4, 4), (4, 2)]
    same(parts[1], A[:, 4:])
    same(torch.split(t(A), [1, 3])[1], A[1:])
    same(torch.cat([t(A), t(B)], dim=1), np.concatenate([A, B], axis=1))
    same(torch.stack([t(A), t(B)]), np.stack([A, B]))


@pytest.mark.parametrize("name", ["sum", "prod", "mean", "amax", "amin", "any", "all"])
def test_reductions_take_dim_and_keepdim(name):
    reference = {"amax": np.max, "amin": np.min}.get(name, getattr(np, name))
    x = t(A)
    same(getattr(x, name)(dim=1, keepdim=True), reference(A, axis=1, keepdims=True))
    same(getattr(x, name)(0), reference(A, axis=0))
    same(getattr(torch, name)(x, dim=0, keepdim=True), reference(A, axis=0, keepdims=True))
    same(getattr(x, name)(), np.asarray(reference(A)))


def test_max_and_min_give_values_and_indices_along_a_dim():
    x = t(A)
    values, indices = torch.max(x, dim=1, keepdim=True)
    same(values, A.max(axis=1, keepdims=True))
    same(indices, A.argmax(axis=1)[:, None].astype(np.int64))
    same(x.min(0).values, A.min(axis=0))
    same(x.min(0).indices, A.argmin(axis=0).astype(np.int64))
    same(x.max(), np.asarray(A.max()))
    same(torch.max(x, t(B)), np.maximum(A, B))
    same(torch.min(x, t(B)), np.minimum(A, B))
    same(torch.max(x, axis=1, keepdims=True).values, A.max(axis=1, keepdims=True))
    same(torch.sum(x, axis=1, keepdims=True), A.sum(axis=1, keepdims=True))
    same(torch.argmax(x, dim=1), A.argmax(axis=1).astype(np.int64))
    same(torch.argmin(x), np.asarray(A.argmin()).astype(np.int64))
    same(x.norm(), np.asarray(np.sqrt((A.astype(np.float64) ** 2).sum())).astype(np.float32))
    same(torch.count_nonzero(t(A > 0)), np.asarray(np.count_nonzero(A > 0), np.int64))


ELEMENTWISE = {
    "exp": np.exp,
    "sqrt": lambda a: np.sqrt(np.abs(a)),
    "rsqrt": lambda a: 1 / np.sqrt(np.abs(a)),
    "log": lambda a: np.log(np.abs(a)),
    "sin": np.sin,
    "cos": np.cos,
    "tanh": np.tanh,
    "neg": np.negative,
    "abs": np.abs,
    "sigmoid": lambda a: 1 / (1 + np.exp(-a)),
    "relu": lambda a: np.maximum(a, 0),
    "floor": np.floor,
    "ceil": np.ceil,
    "round": np.round,
    "sign": np.sign,
    "square": np.square,
    "reciprocal": np.reciprocal,
}


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_unary_functions_and_methods(name):
    reference = ELEMENTWISE[name]
    arg = np.abs(A) if name in ("sqrt", "rsqrt", "log") else A
    same(getattr(torch, name)(t(arg)), reference(A).astype(np.float32))
    same(getattr(t(arg), name)(), reference(A).astype(np.float32))


BINARY = {
    "maximum": np.maximum,
    "minimum": np.minimum,
    "pow": np.power,
    "fmod": np.fmod,
    "remainder": np.remainder,
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "eq": np.equal,
    "ne": np.not_equal,
    "gt": np.greater,
    "lt": np.less,
    "ge": np.greater_equal,
    "le": np.less_equal,
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_functions_and_methods(name):
    a, b = (np.abs(A), B) if name != "pow" else (np.abs(A), np.full_like(B, 2))
    same(getattr(torch, name)(t(a), t(b)), BINARY[name](a, b))
    same(getattr(t(a), name)(t(b)), BINARY[name](a, b))


def test_integer_bit_ops_division_and_clamp():
    x = np.array([[-7, 5, 12, 0]], np.int32)
    y = np.array([[2, 3, -5, 7]], np.int32)
    same(torch.bitwise_and(t(x), t(y)), x & y)
    same(t(x).bitwise_or(t(y)), x | y)
    same(torch.bitwise_xor(t(x), t(y)), x ^ y)
    same(torch.bitwise_not(t(x)), ~x)
    same(torch.div(t(x), t(y), rounding_mode="floor"), x // y)
    same(torch.div(t(x), t(y), rounding_mode="trunc"), np.trunc(x / y).astype(np.int32))
    same(torch.div(t(A), t(B)), A / B)
    same(torch.clamp(t(A), min=-0.5, max=0.5), np.clip(A, -0.5, 0.5))
    same(t(x).clamp(min=0), np.clip(x, 0, None))
    same(t(A).masked_fill(t(A > 0), 0.0), np.where(A > 0, 0.0, A).astype(np.float32))
    same(torch.where(t(A > 0), t(A), t(B)), np.where(A > 0, A, B))


def test_matmul_softmax_sort_gather_scatter():
    w = RNG.standard_normal((6, 3)).astype(np.float32)
    same(torch.matmul(t(A), t(w)), A @ w)
    same(t(A) @ t(w), A @ w)
    same(torch.mm(t(A), t(w)), A @ w)
    batch = RNG.standard_normal((2, 4, 6)).astype(np.float32)
    same(torch.bmm(t(batch), t(np.stack([w, w]))), batch @ np.stack([w, w]))
    e = np.exp(A - A.max(axis=-1, keepdims=True))
    same(torch.softmax(t(A), dim=-1), e / e.sum(axis=-1, keepdims=True))
    same(t(A).softmax(-1), e / e.sum(axis=-1, keepdims=True))
    values, indices = torch.sort(t(A), descending=True)
    same(values, -np.sort(-A, axis=-1))
    same(indices, np.argsort(-A, axis=-1, kind="stable").astype(np.int64))
    same(np.sort(t(A), axis=0), np.sort(A, axis=0))
    index = np.array([[0, 2], [1, 1], [5, 0], [3, 4]])
    same(torch.gather(t(A), dim=-1, index=t(index)), np.take_along_axis(A, index, axis=-1))
    want = np.array(A)
    np.put_along_axis(want, index, B[:, :2], axis=1)
    same(torch.scatter(t(A), 1, t(index), t(B[:, :2])), want)
    same(torch.triu(t(A), 1), np.triu(A, 1))
    same(torch.tril(t(A)), np.tril(A))
    same(t(A).cumsum(1), np.cumsum(A, axis=1))
    same(torch.unique(t(np.array([3, 1, 3]))), np.array([1, 3]))


def test_in_place_methods_write_the_tensor():
    x = t(A)
    assert x.zero_() is x and not x.any()
    x.fill_(2.0).add_(1.0).mul_(2.0)
    same(x, np.full_like(A, 6.0))
    x.copy_(t(B))
    same(x, B)
    x.masked_fill_(t(B > 0), 0.0)
    same(x, np.where(B > 0, 0, B).astype(np.float32))


def test_comparisons_close_and_equal():
    assert torch.allclose(t(A), t(A * (1 + 1e-6))) and not torch.allclose(t(A), t(B))
    assert torch.allclose(t(A), t(A + 0.01), rtol=0, atol=0.02)
    same(torch.isclose(t(A), t(B)), np.isclose(A, B, rtol=1e-5, atol=1e-8))
    assert torch.equal(t(A), t(A.copy())) and not torch.equal(t(A), t(A[:2]))
    torch.testing.assert_close(t(A), t(A + 1e-7))
    with pytest.raises(AssertionError):
        torch.testing.assert_close(t(A), t(B))
    same(torch.isnan(t(np.array([np.nan, 1.0], np.float32))), np.array([True, False]))
    assert (t(A) - t(B)).abs().max().item() == pytest.approx(float(np.abs(A - B).max()))
