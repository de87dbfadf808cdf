"""blockpipe.language programs lower to the bp IR we expect."""

import inspect
import re

import blockpipe.language as pl
from blockpipe import _core
from blockpipe.language.lowering import lower_program, program_ir


def lower(program) -> str:
    return program_ir(program)


@pl.program
class DownProjResidual:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(
        self,
        x: pl.Tensor[[128, 64], pl.FP32],
        w: pl.Tensor[[64, 32], pl.FP32],
        res: pl.Tensor[[128, 32], pl.FP32],
        out: pl.Out[pl.Tensor[[128, 32], pl.FP32]],
    ) -> pl.Tensor[[128, 32], pl.FP32]:
        row = pl.tile.get_block_idx() * 32
        a = pl.load(x, [row, 0], [32, 64], target_memory=pl.MemorySpace.Mat)
        b = pl.load(w, [0, 0], [64, 32], target_memory=pl.MemorySpace.Mat)
        acc = pl.matmul(
            pl.move(a, target_memory=pl.MemorySpace.Left),
            pl.move(b, target_memory=pl.MemorySpace.Right),
        )
        y = pl.add(acc, pl.load(res, [row, 0], [32, 32]))
        return pl.store(y, [row, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[128, 64], pl.FP32],
        w: pl.Tensor[[64, 32], pl.FP32],
        res: pl.Tensor[[128, 32], pl.FP32],
        out: pl.Out[pl.Tensor[[128, 32], pl.FP32]],
    ) -> pl.Tensor[[128, 32], pl.FP32]:
        with pl.spmd(4):
            out = self.kernel(x, w, res, out)
        return out


def test_flagship_lowers_to_mixed_kernel_and_launch():
    ir = lower(DownProjResidual)
    assert "bp.kind = #bp<kind incore>" in ir
    assert "bp.load %arg0[%1, %c0] : !bp.tensor<128x64xf32> -> !bp.tile<32x64xf32, mat>" in ir
    assert "bp.move %2 : !bp.tile<32x64xf32, mat> -> !bp.tile<32x64xf32, left>" in ir
    assert "-> !bp.tile<32x32xf32, acc>" in ir
    # The vector add reads the accumulator through an explicit acc -> vec move.
    assert re.search(r"bp.move %\d+ : !bp.tile<32x32xf32, acc> -> !bp.tile<32x32xf32, vec>", ir)
    assert "!bp.tensor<128x32xf32> {bp.dir = #bp<dir out>}" in ir
    assert re.search(r"bp.launch @kernel\(%arg0, %arg1, %arg2, %arg3\) core_num\(4\)", ir)


def test_locations_are_the_users_file_line_and_names():
    text = lower_program(DownProjResidual, _core).text(True)
    lines, first = inspect.getsourcelines(DownProjResidual.cls)
    matmul_line = first + next(i for i, line in enumerate(lines) if "acc = pl.matmul" in line)
    assert re.search(rf'loc\("acc"\("{re.escape(__file__)}":{matmul_line}:\d+\)\)', text), text


@pl.program
class Inferred:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(
        self,
        x: pl.Tensor[[pl.dynamic, 64], pl.FP32],
        w: pl.Tensor[[64, 64], pl.FP32],
        out: pl.Out[pl.Tensor[[pl.dynamic, 64], pl.FP32]],
    ):
        row = pl.tile.get_block_idx() * 16
        acc = pl.full([16, 64], pl.FP32, 0.0)
        for k in pl.range(4):
            a = pl.load(x, [row, 0], [16, 64])
            acc = acc + pl.exp(a) * 0.5
        m = pl.matmul(pl.load(x, [row, 0], [16, 64]), pl.load(w, [0, 0], [64, 64]))
        sq = pl.load(w, [0, 0], [64, 64])
        m2 = pl.matmul(pl.load(w, [0, 0], [16, 64]), sq, acc=m)
        y = pl.relu(m2) - acc
        return pl.store(y, [row, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[pl.dynamic, 64], pl.FP32],
        w: pl.Tensor[[64, 64], pl.FP32],
        out: pl.Out[pl.Tensor[[pl.dynamic, 64], pl.FP32]],
    ):
        for i in pl.spmd(pl.tensor.dim(x, 0) // 16, sync_start=True, name_hint="rows"):
            out = self.kernel(x, w, out)
        return out


def test_memory_spaces_are_inferred_from_use():
    ir = lower(Inferred)
    assert "-> !bp.tile<16x64xf32, left>" in ir
    assert "-> !bp.tile<64x64xf32, right>" in ir
    # The loop body's load only feeds vector ops.
    assert re.search(r"scf.for .* iter_args\(%arg\d+ = %\d+\) -> \(!bp.tile<16x64xf32, vec>\)", ir)
    assert "bp.exp" in ir and "bp.mul" in ir and "f32" in ir
    assert "acc(%" in ir


def test_each_function_is_lowered_once_and_the_passes_decide_spaces_and_pop_types(monkeypatch):
    from blockpipe.language.function_lowering import FunctionLowering

    lowered = []
    original = FunctionLowering.lower

    def counting(self):
        lowered.append(self.spec.name)
        return original(self)

    monkeypatch.setattr(FunctionLowering, "lower", counting)
    session = lower_program(Inferred, _core)
    assert sorted(lowered) == sorted(Inferred.functions)
    # What the frontend built leaves the loads' spaces to the compiler.
    text = session.text()
    assert "!bp.tile<16x64xf32, ?>" in text and "!bp.tile<16x64xf32, left>" not in text
    lowered.clear()
    # Both halves pop: the one built first (the AIC, in program order) leaves
    # its pop's type to bp-infer-pipe-types; the other takes its annotation.
    text = lower_program(ExplicitPipes, _core).text()
    assert sorted(lowered) == sorted(ExplicitPipes.functions)
    assert "bp.tpop v2c pipe(0) : !bp.tile<*, mat>" in text
    assert "bp.tpop c2v pipe(0) : !bp.tile<16x16xf32, vec>" in text
    ir = lower(ExplicitPipes)
    assert "bp.tpop v2c pipe(0) : !bp.tile<16x16xf32, mat>" in ir and "*" not in ir
    assert ir.index("func.func @cube") < ir.index("func.func @vector")  # program order


def test_dynamic_core_num_and_launch_options():
    ir = lower(Inferred)
    assert "bp.dim %arg0, 0 : !bp.tensor<?x64xf32>" in ir
    assert "arith.floordivsi" in ir
    assert re.search(
        r'bp.launch @kernel\(.*\) core_num\(%\d+\) sync_start \{name_hint = "rows"\}', ir
    )


@pl.program
class ExplicitPipes:
    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, x: pl.Tensor[[16, 16], pl.FP32]):
        pl.aic_initialize_pipe(dir_mask=3, slot_size=1024, slot_num=2)
        a = pl.load(x, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat)
        b = pl.tpop_from_aiv()
        c = pl.matmul(a, b)
        pl.tfree_to_aiv()
        pl.tpush_to_aiv(c)

    @pl.function(type=pl.FunctionType.AIV)
    def vector(self, y: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
        pl.aiv_initialize_pipe(dir_mask=3, slot_size=1024, slot_num=2)
        t = pl.exp(pl.load(y, [0, 0], [16, 16]))
        pl.tpush_to_aic(t)
        r: pl.Tile[[16, 16], pl.FP32] = pl.tpop_from_aic()
        s = pl.add(r, t)
        pl.tfree_to_aic()
        return pl.store(s, [0, 0], out)

    @pl.function(type=pl.FunctionType.Group)
    def group(
        self,
        x: pl.Tensor[[16, 16], pl.FP32],
        y: pl.Tensor[[16, 16], pl.FP32],
        out: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
    ):
        self.cube(x)
        out = self.vector(y, out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[16, 16], pl.FP32],
        y: pl.Tensor[[16, 16], pl.FP32],
        out: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
    ):
        with pl.spmd(2):
            out = self.group(x, y, out)
        with pl.spmd(8):
            out = self.group(x, y, out)
        return out


def test_explicit_pipes_and_groups():
    ir = lower(ExplicitPipes)
    assert "bp.initialize_pipe id(0) dir_mask(c2v|v2c) slot_size(1024) slot_num(2)" in ir
    # The AIC pops what the AIV pushes, typed from the push, in mat memory.
    assert "bp.tpop v2c pipe(0) : !bp.tile<16x16xf32, mat>" in ir
    assert "bp.tpush c2v" in ir and "bp.tpush v2c" in ir
    assert "bp.tpop c2v pipe(0) : !bp.tile<16x16xf32, vec>" in ir
    assert "bp.tfree c2v pipe(0)" in ir and "bp.tfree v2c pipe(0)" in ir
    assert "call @cube" in ir and "call @vector" in ir
    assert "core_num(2)" in ir and "core_num(8)" in ir


@pl.program
class Pipeline:
    @pl.function(type=pl.FunctionType.Orchestration, device=0)
    def stage0(self, x: pl.Tensor[[32, 64], pl.FP32], h: pl.Out[pl.Tensor[[32, 64], pl.FP32]]):
        return h

    @pl.function(type=pl.FunctionType.Orchestration, device=1)
    def stage1(self, h: pl.Tensor[[32, 64], pl.FP32], y: pl.Out[pl.Tensor[[32, 64], pl.FP32]]):
        return y

    @pl.function(type=pl.FunctionType.Pipeline, microbatches=4)
    def forward(self, x: pl.Tensor[[128, 64], pl.FP32], y: pl.Out[pl.Tensor[[128, 64], pl.FP32]]):
        h = pl.create_tensor([32, 64], dtype=pl.FP32)
        h = self.stage0(h, h)
        y2 = self.stage1(h, h)
        return y


def test_pipeline_functions_and_devices():
    ir = lower(Pipeline)
    assert "bp.num_devices = 2" in ir
    assert "bp.device = 1 : i64" in ir
    assert "bp.microbatches = 4 : i64" in ir
    assert "bp.tensor_create : !bp.tensor<32x64xf32>" in ir
    assert "bp.stage @stage0(" in ir and "bp.stage @stage1(" in ir


def test_string_annotations_are_evaluated(tmp_path):
    # `from __future__ import annotations` turns annotations into strings.
    module = tmp_path / "future_annotations.py"
    module.write_text(
        "from __future__ import annotations\n"
        "import blockpipe.language as pl\n"
        "N = 16\n"
        "@pl.program\n"
        "class P:\n"
        "    @pl.function(type=pl.FunctionType.InCore)\n"
        "    def k(self, x: pl.Tensor[[N, N], pl.FP32],\n"
        "          y: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:\n"
        "        return pl.store(pl.load(x, [0, 0], [N, N]), [0, 0], y)\n"
    )
    import importlib.util

    spec = importlib.util.spec_from_file_location("future_annotations", module)
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    ir = program_ir(loaded.P)
    assert (
        "func.func @k(%arg0: !bp.tensor<16x16xf32>, %arg1: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>}) -> !bp.tensor<16x16xf32>"
        in ir
    )
