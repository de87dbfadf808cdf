"""Interpreter mode (BLOCKPIPE_INTERPRET=1): programs run their own Python
functions block by block on NumPy. Each program here runs compiled and
interpreted on the same inputs; both equal NumPy (and each other)."""

import importlib
import linecache
import pathlib
import sys

import numpy as np
import pytest

import blockpipe
import blockpipe.language as pl
from blockpipe.interpreter import InterpretedProgram

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def example(name):
    sys.path.insert(0, str(EXAMPLES))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(EXAMPLES))


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def pipes_expected(a, b):
    e = np.exp(a)
    return np.concatenate([e[i * 16 : (i + 1) * 16] @ b for i in range(4)]) + e


def mlp_inputs(layers):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8 * 16, 64), dtype=np.float32)  # pipeline_mlp's shapes
    weights = [rng.standard_normal((64, 64), dtype=np.float32) / 8 for _ in range(layers)]
    return [x, *weights, np.zeros_like(x)]


def mlp_expected(x, *weights_and_y):
    for w in weights_and_y[:-1]:
        x = np.maximum(x @ w, 0)
    return x


# name: (example, its program: a class name or a function of the module,
# inputs, index of the output, what NumPy says it holds)
CASES = {
    "pipeline_mlp 2 stages": (
        "pipeline_mlp",
        lambda m: m.two_stage_mlp(),
        lambda: mlp_inputs(2),
        3,
        mlp_expected,
    ),  # fmt: skip
    "pipeline_mlp 4 stages gpipe": (
        "pipeline_mlp",
        lambda m: m.four_stage_mlp(),
        lambda: mlp_inputs(4),
        5,
        mlp_expected,
    ),  # fmt: skip
    "pipeline_mlp 4 stages on 2 devices interleaved": (
        "pipeline_mlp",
        lambda m: m.four_stage_mlp((0, 1, 0, 1), schedule="interleaved"),
        lambda: mlp_inputs(4),
        5,
        mlp_expected,
    ),  # fmt: skip
    "spmd_add": (
        "spmd_add",
        "SpmdAdd",
        lambda: [rand(128, 64), rand(128, 64, seed=1), np.zeros((128, 64), np.float32)],
        2,
        lambda a, b, c: a + b,
    ),  # fmt: skip
    "row_softmax": (
        "row_softmax",
        "RowSoftmax",
        lambda: [rand(64, 128) * 4, np.zeros((64, 128), np.float32)],
        1,
        lambda x, y: softmax(x),
    ),  # fmt: skip
    "down_proj_residual": (
        "down_proj_residual",
        "DownProjResidual",
        lambda: [
            rand(128, 64),
            rand(64, 32, seed=1),
            rand(128, 32, seed=2),
            np.zeros((128, 32), np.float32),
        ],
        3,
        lambda x, w, r, o: x @ w + r,
    ),  # fmt: skip
    "two_launches": (
        "two_launches",
        "TwoLaunches",
        lambda: [rand(128, 32), rand(32, 32, seed=1), np.zeros((128, 32), np.float32)],
        2,
        lambda x, w, y: 2 * (x @ w),
    ),  # fmt: skip
    "explicit_pipes": (
        "explicit_pipes",
        "ExplicitPipes",
        lambda: [rand(64, 16) * 0.5, rand(16, 16, seed=1), np.zeros((64, 16), np.float32)],
        2,
        lambda a, b, o: pipes_expected(a, b),
    ),  # fmt: skip
    "dynamic_core_num": (
        "dynamic_core_num",
        "DynamicCoreNum",
        lambda: [rand(48, 32), rand(32, 32, seed=1), np.zeros((48, 32), np.float32)],
        2,
        lambda x, w, y: np.maximum(x @ w, 0),
    ),  # fmt: skip
}


def test_every_example_is_a_case():
    assert {p.stem for p in EXAMPLES.glob("*.py")} == {case[0] for case in CASES.values()}


def both(program, make_args, monkeypatch, entry=None, devices=None):
    """The arguments after a compiled run and after an interpreted one."""
    compiled_args = make_args()
    compiled = blockpipe.compile(program, quiet=True, devices=devices)
    assert isinstance(compiled, blockpipe.CompiledProgram)
    compiled.run(entry, *compiled_args)
    monkeypatch.setenv("BLOCKPIPE_INTERPRET", "1")
    interpreted_args = make_args()
    interpreted = blockpipe.compile(program, devices=devices)
    assert isinstance(interpreted, InterpretedProgram)
    interpreted.run(entry, *interpreted_args)
    return compiled_args, interpreted_args


@pytest.mark.parametrize("name", sorted(CASES))
def test_examples_interpreted_equal_compiled_and_numpy(name, monkeypatch):
    module, program, make_args, out, expected = CASES[name]
    module = example(module)
    program = program(module) if callable(program) else getattr(module, program)
    compiled, interpreted = both(program, make_args, monkeypatch)
    np.testing.assert_allclose(interpreted[out], compiled[out], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(interpreted[out], expected(*make_args()), rtol=1e-5, atol=1e-4)


T = pl.Tensor[[64, 32], pl.FP32]
V = pl.Tensor[[64, 1], pl.FP32]


@pl.program
class Mixed:
    """Loops with a carried tile, a scalar parameter, full, cast, column and
    row reductions, a valid shape and the tile operators."""

    @pl.function(type=pl.FunctionType.InCore)
    def kernel(
        self,
        x: T,
        scale: pl.Scalar[pl.FP32],
        y: pl.Out[T],
        rows: pl.Out[V],
    ) -> tuple[T, V]:
        base = pl.tile.get_block_idx() * 16
        t = pl.load(x, [base, 0], [16, 32])
        acc = pl.full([16, 32], pl.FP32, 1.0)
        for k in pl.range(3):
            acc = pl.add(acc, pl.muls(t, scale)) - pl.col_max(t)
        h = pl.cast(pl.cast(acc, pl.FP16), pl.FP32)
        y = pl.store(h * 2.0, [base, 0], y)
        v = pl.load(x, [base, 0], [16, 32], valid_shape=[16, 24])
        rows = pl.store(pl.row_sum(v), [base, 0], rows)
        return y, rows

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: T, scale: pl.Scalar[pl.FP32], y: pl.Out[T], rows: pl.Out[V]) -> tuple[T, V]:
        with pl.spmd(4):
            y, rows = self.kernel(x, scale, y, rows)
        return y, rows


def mixed_expected(x, scale):
    y = np.zeros((64, 32), np.float32)
    for b in range(4):
        t = x[b * 16 : b * 16 + 16]
        acc = 1 + 3 * (t * scale - t.max(axis=0, keepdims=True))
        y[b * 16 : b * 16 + 16] = acc.astype(np.float16).astype(np.float32) * 2
    return y, x[:, :24].sum(axis=1, keepdims=True)


def test_loops_scalars_casts_reductions_and_valid_shapes(monkeypatch):
    x = rand(64, 32, seed=7)

    def make():
        return [x.copy(), 0.5, np.zeros((64, 32), np.float32), np.zeros((64, 1), np.float32)]

    compiled, interpreted = both(Mixed, make, monkeypatch)
    for i in (2, 3):
        np.testing.assert_allclose(interpreted[i], compiled[i], rtol=1e-3, atol=1e-3)
    y, rows = mixed_expected(x, 0.5)
    np.testing.assert_allclose(interpreted[2], y, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(interpreted[3], rows, rtol=1e-5, atol=1e-5)


@pl.jit.incore
def jit_rows(x: pl.Tensor[[64, 32], pl.FP32], out: pl.Out[pl.Tensor[[64, 32], pl.FP32]]):
    r = pl.tile.get_block_idx() * 16
    out[r : r + 16, :] = pl.relu(x[r : r + 16, :] + 0.5)
    return out


@pl.jit
def jit_entry(x: pl.Tensor[[64, 32], pl.FP32], out: pl.Out[pl.Tensor[[64, 32], pl.FP32]]):
    with pl.spmd(4):
        out = jit_rows(x, out)
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.mul(out, 2.0)
    return out


def test_jit_with_spmd_and_at_scopes(monkeypatch):
    x = rand(64, 32, seed=3)
    compiled = np.zeros_like(x)
    jit_entry(x, compiled)
    monkeypatch.setenv("BLOCKPIPE_INTERPRET", "1")
    interpreted = np.zeros_like(x)
    assert jit_entry(x, interpreted) is interpreted
    np.testing.assert_allclose(interpreted, compiled, rtol=1e-6)
    np.testing.assert_allclose(interpreted, 2 * np.maximum(x + 0.5, 0), rtol=1e-6)


SEEN = []


@pl.program
class Peek:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: T, y: pl.Out[T]) -> T:
        row = pl.tile.get_block_idx() * 16
        t = pl.exp(pl.load(x, [row, 0], [16, 32]))
        breakpoint()  # noqa: T100 - the hook under test
        return pl.store(t, [row, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: T, y: pl.Out[T]) -> T:
        with pl.spmd(4):
            y = self.kernel(x, y)
        return y


def test_a_breakpoint_in_a_kernel_sees_tiles_as_arrays(monkeypatch):
    def hook():
        frame = sys._getframe(1)
        SEEN.append((pl.tile.get_block_idx(), frame.f_locals["row"], frame.f_locals["t"]))

    monkeypatch.setattr(sys, "breakpointhook", hook)
    monkeypatch.setenv("BLOCKPIPE_INTERPRET", "1")
    x, y = rand(64, 32), np.zeros((64, 32), np.float32)
    SEEN.clear()
    blockpipe.compile(Peek)(x, y)
    assert [(b, r) for b, r, _ in SEEN] == [(b, 16 * b) for b in range(4)]  # block order
    for block, _, t in SEEN:
        assert isinstance(t, np.ndarray) and t.shape == (16, 32) and t.dtype == np.float32
        np.testing.assert_allclose(t, np.exp(x[16 * block : 16 * block + 16]), rtol=1e-6)
    np.testing.assert_allclose(y, np.exp(x), rtol=1e-6)


@pl.program
class Gathers:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: T, y: pl.Out[T]) -> T:
        row = pl.tile.get_block_idx() * 16
        t = pl.load(x, [row, 0], [16, 32])
        u = pl.tile.tri(0, [16, 32], dtype=pl.FP32)  # the construct the test names
        return pl.store(pl.mul(t, u), [row, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: T, y: pl.Out[T]) -> T:
        with pl.spmd(4):
            y = self.kernel(x, y)
        return y


def test_an_unsupported_construct_is_an_error_at_the_users_line(monkeypatch):
    monkeypatch.setenv("BLOCKPIPE_INTERPRET", "1")
    x, y = rand(64, 32), np.zeros((64, 32), np.float32)
    with pytest.raises(blockpipe.CompileError, match="pl.tile.tri is not supported in interp") as e:
        blockpipe.compile(Gathers)(x, y)
    assert e.value.file == __file__
    assert "the construct the test names" in linecache.getline(e.value.file, e.value.line)
    assert not y.any()  # a failed call leaves its outputs untouched


def test_a_window_outside_the_tensor_fails_at_its_line_naming_the_block(monkeypatch):
    @pl.program
    class FiveBlocks:
        @pl.function(type=pl.FunctionType.InCore)
        def copy(self, x: T, y: pl.Out[T]) -> T:
            row = pl.tile.get_block_idx() * 16
            return pl.store(pl.load(x, [row, 0], [16, 32]), [row, 0], y)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: T, y: pl.Out[T], blocks: pl.Scalar[pl.INDEX]) -> T:
            with pl.spmd(blocks):
                y = self.copy(x, y)
            return y

    monkeypatch.setenv("BLOCKPIPE_INTERPRET", "1")
    x, y = rand(64, 32), np.zeros((64, 32), np.float32)
    with pytest.raises(blockpipe.ExecutionError, match=r"kernel 'copy' block 4: pl.load window"):
        blockpipe.compile(FiveBlocks)(x, y, 5)
    assert not y.any()
    with pytest.raises(ValueError, match="parameter 'y' must have shape"):
        blockpipe.compile(FiveBlocks)(x, np.zeros((32, 32), np.float32), 4)
    blockpipe.compile(FiveBlocks)(x, y, 4)
    np.testing.assert_array_equal(y, x)


def test_compile_errors_are_the_compilers(monkeypatch):
    @pl.program
    class Misspelt:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, x: T, y: pl.Out[T]) -> T:
            return pl.store(pl.expp(pl.load(x, [0, 0], [16, 32])), [0, 0], y)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: T, y: pl.Out[T]) -> T:
            y = self.kernel(x, y)
            return y

    monkeypatch.setenv("BLOCKPIPE_INTERPRET", "1")
    with pytest.raises(blockpipe.CompileError, match="did you mean") as e:
        blockpipe.compile(Misspelt)
    assert "pl.expp" in linecache.getline(e.value.file, e.value.line)


M = pl.Tensor[[16, 16], pl.FP32]
RING = [[0, 1], [1, 2], [2, 3], [3, 0]]


@pl.program
class MeshOps:
    """A kernel on every device, a ring (a cycle the compiler splits in two
    phases), a shift whose device 0 is no target, send/recv on a channel of
    their own, and pl.device_id() as a launch's block count."""

    @pl.function(type=pl.FunctionType.InCore)
    def scale(self, x: M, s: pl.Scalar[pl.FP32], out: pl.Out[M]) -> M:
        row = pl.tile.get_block_idx() * 8
        return pl.store(pl.muls(pl.load(x, [row, 0], [8, 16]), s), [row, 0], out)

    @pl.function(type=pl.FunctionType.InCore)
    def rows(self, x: M, y: pl.InOut[M]) -> M:
        row = pl.tile.get_block_idx() * 4
        return pl.store(pl.load(x, [row, 0], [4, 16]), [row, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self, x: M, s: pl.Scalar[pl.FP32], ring: pl.Out[M], shifted: pl.Out[M], back: pl.InOut[M]
    ) -> tuple[M, M, M]:
        t = pl.create_tensor([16, 16], dtype=pl.FP32)
        with pl.spmd(2):
            t = self.scale(x, s, t)
        ring = pl.collective_permute(t, ring, source_target_pairs=RING)
        shifted = pl.collective_permute(x, shifted, [[0, 1], [1, 2], [2, 3]], channel=1)
        pl.send(ring, [[1, 0], [3, 2]], channel=2)
        back = pl.recv(back, [[1, 0], [3, 2]], channel=2)
        return ring, shifted, back

    @pl.function(type=pl.FunctionType.Orchestration)
    def spread(self, x: M, y: pl.InOut[M]) -> M:
        with pl.spmd(pl.device_id() + 1):
            y = self.rows(x, y)
        return y


def mesh_inputs():
    x = rand(4, 16, 16, seed=5)
    # Outputs start at 9: a device that is no target must write its zeros.
    return [x, 0.5, np.full_like(x, 9.0), np.full_like(x, 9.0), np.full_like(x, 7.0)]


def test_a_mesh_program_interpreted_equals_compiled_and_numpy(monkeypatch):
    compiled, interpreted = both(MeshOps, mesh_inputs, monkeypatch, devices=4)
    x = mesh_inputs()[0]
    ring = np.stack([0.5 * x[(d - 1) % 4] for d in range(4)])
    shifted = np.stack([np.zeros_like(x[0]), *x[:3]])
    back = np.stack([ring[1], np.full_like(x[0], 7.0), ring[3], np.full_like(x[0], 7.0)])
    for i, expected in ((2, ring), (3, shifted), (4, back)):
        np.testing.assert_array_equal(interpreted[i], compiled[i])
        np.testing.assert_allclose(interpreted[i], expected, rtol=1e-6)


def test_device_id_is_the_device_of_a_mesh_run(monkeypatch):
    def make():
        return [rand(4, 16, 16, seed=6), np.full((4, 16, 16), -1.0, np.float32)]

    compiled, interpreted = both(MeshOps, make, monkeypatch, entry="spread", devices=4)
    np.testing.assert_array_equal(interpreted[1], compiled[1])
    x = make()[0]
    for d in range(4):  # device d runs d + 1 blocks of 4 rows
        np.testing.assert_array_equal(interpreted[1][d, : 4 * (d + 1)], x[d, : 4 * (d + 1)])
        assert (interpreted[1][d, 4 * (d + 1) :] == -1.0).all()


def test_a_mesh_call_makes_its_outputs_with_the_device_axis(monkeypatch):
    monkeypatch.setenv("BLOCKPIPE_INTERPRET", "1")
    program = blockpipe.compile(MeshOps, devices=4)
    x, s, _, _, back = mesh_inputs()
    ring, shifted, back = program(x, s, back)  # the Out arrays left out
    assert ring.shape == shifted.shape == (4, 16, 16)
    np.testing.assert_allclose(ring[0], 0.5 * x[3], rtol=1e-6)
    with pytest.raises(ValueError, match=r"parameter 'x' must have shape \[4, 16, 16\]"):
        program(x[:2], s, back)


@pl.program
class Uneven:
    @pl.function(type=pl.FunctionType.InCore)
    def copy(self, x: T, y: pl.Out[T]) -> T:
        row = pl.tile.get_block_idx() * 16
        return pl.store(pl.load(x, [row, 0], [16, 32]), [row, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: T, y: pl.Out[T]) -> T:
        with pl.spmd(pl.device_id() + 4):  # device 1: 5 blocks of a 4-block tensor
            y = self.copy(x, y)
        pl.send(y, [[1, 0]])
        y = pl.recv(y, [[1, 0]])
        return y


def test_a_device_failing_before_its_send_is_the_error_not_a_hang(monkeypatch):
    monkeypatch.setenv("BLOCKPIPE_INTERPRET", "1")
    x, y = rand(2, 64, 32), np.full((2, 64, 32), 3.0, np.float32)
    with pytest.raises(blockpipe.ExecutionError, match=r"device 1: kernel 'copy' block 4") as e:
        blockpipe.compile(Uneven, devices=2)(x, y)
    # Device 0's recv, left waiting, is named in a note.
    assert any(
        "device 0: pl.recv from device 1" in n and "deadlock" in n for n in e.value.__notes__
    )
    assert (y == 3.0).all()


@pl.program
class WaitForEachOther:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: M, y: pl.Out[M]) -> M:
        y = pl.recv(y, [[0, 1], [1, 0]], channel=3)  # the line the test names
        pl.send(x, [[0, 1], [1, 0]], channel=3)
        return y


def test_a_recv_no_send_answers_is_a_deadlock_error(monkeypatch):
    # The compiler rejects this order (bp-verify-p2p); the interpreter, run
    # without it, still fails rather than hangs.
    monkeypatch.setenv("BLOCKPIPE_INTERPRET", "1")
    program = InterpretedProgram(WaitForEachOther, devices=2)
    x, y = rand(2, 16, 16), np.zeros((2, 16, 16), np.float32)
    with pytest.raises(blockpipe.ExecutionError, match=r"device 0: pl.recv from device 1 on ch"):
        program(x, y)
    with pytest.raises(blockpipe.CompileError, match="deadlock"):
        blockpipe.compile(WaitForEachOther, devices=2)


Half = pl.Tensor[[32, 32], pl.FP32]


@pl.program
class FailingStage:
    @pl.function(type=pl.FunctionType.InCore)
    def copy(self, x: Half, y: pl.Out[Half]) -> Half:
        row = pl.tile.get_block_idx() * 16
        return pl.store(pl.load(x, [row, 0], [16, 32]), [row, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration, device=0)
    def stage0(self, x: Half, h: pl.Out[Half]) -> Half:
        with pl.spmd(2):
            h = self.copy(x, h)
        return h

    @pl.function(type=pl.FunctionType.Orchestration, device=1)
    def stage1(self, h: Half, blocks: pl.Scalar[pl.INDEX], y: pl.Out[Half]) -> Half:
        with pl.spmd(blocks):
            y = self.copy(h, y)
        return y

    @pl.function(type=pl.FunctionType.Pipeline, microbatches=2)
    def forward(self, x: T, blocks: pl.Scalar[pl.INDEX], y: pl.Out[T]) -> T:
        h = pl.create_tensor([32, 32], dtype=pl.FP32)
        h = self.stage0(x, h)
        y = self.stage1(h, blocks, y)
        return y


def test_a_failing_stage_names_its_stage_device_and_microbatch(monkeypatch):
    monkeypatch.setenv("BLOCKPIPE_INTERPRET", "1")
    program = blockpipe.compile(FailingStage)
    x, y = rand(64, 32), np.zeros((64, 32), np.float32)
    program(x, 2, y)
    np.testing.assert_array_equal(y, x)
    y[:] = 5.0
    with pytest.raises(
        blockpipe.ExecutionError,
        match=r"stage 'stage1' \(device 1\) microbatch 0: kernel 'copy' block 2: pl.load",
    ):
        program(x, 3, y)
    assert (y == 5.0).all()


def test_ctrl_c_during_a_mesh_call_leaves_outputs_and_program_usable(monkeypatch):
    import _thread

    @pl.program
    class Stop:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: M, y: pl.Out[M]) -> M:
            breakpoint()  # noqa: T100 - where Ctrl-C comes
            y = pl.collective_permute(x, y, source_target_pairs=[[0, 1], [1, 0]])
            return y

    started = []

    def hook():
        started.append(pl.device_id())
        if len(started) == 1:
            _thread.interrupt_main()  # what Ctrl-C does

    monkeypatch.setattr(sys, "breakpointhook", hook)
    monkeypatch.setenv("BLOCKPIPE_INTERPRET", "1")
    program = blockpipe.compile(Stop, devices=2)
    x, y = rand(2, 16, 16), np.full((2, 16, 16), 4.0, np.float32)
    with pytest.raises(KeyboardInterrupt):
        program(x, y)
    assert (y == 4.0).all()
    program(x, y)
    np.testing.assert_array_equal(y, x[::-1])


@pl.program
class TransferInAStage:
    @pl.function(type=pl.FunctionType.InCore)
    def copy(self, x: M, y: pl.Out[M]) -> M:
        return pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration, device=0)
    def stage0(self, x: M, h: pl.Out[M]) -> M:
        h = self.copy(x, h)
        pl.send(h, [[0, 1]], channel=5)  # the construct the test names
        return h

    @pl.function(type=pl.FunctionType.Orchestration, device=1)
    def stage1(self, h: M, y: pl.Out[M]) -> M:
        t = pl.create_tensor([16, 16], dtype=pl.FP32)
        t = pl.recv(t, [[0, 1]], channel=5)
        y = self.copy(t, y)
        return y

    @pl.function(type=pl.FunctionType.Pipeline, microbatches=2)
    def forward(self, x: pl.Tensor[[32, 16], pl.FP32], y: pl.Out[pl.Tensor[[32, 16], pl.FP32]]):
        h = pl.create_tensor([16, 16], dtype=pl.FP32)
        h = self.stage0(x, h)
        y = self.stage1(h, y)
        return y


def test_a_transfer_in_a_pipeline_stage_is_an_error_at_its_line(monkeypatch):
    # Stages run one after the other here, so a stage's own transfer could
    # wait for a stage not yet run: not interpreted rather than wrong.
    monkeypatch.setenv("BLOCKPIPE_INTERPRET", "1")
    program = blockpipe.compile(TransferInAStage, devices=2)
    with pytest.raises(blockpipe.CompileError, match="pl.send in a pipeline stage") as e:
        program(rand(32, 16))
    assert "the construct the test names" in linecache.getline(e.value.file, e.value.line)
