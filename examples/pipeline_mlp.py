"""Pipeline parallelism: an MLP cut into stages, one per device, fed by
microbatches.

Each stage is an orchestration placed on a device (`device=i`); it launches
a layer kernel that mixes cube work (the matmul) and vector work (the relu),
so the compiler splits it into AIC and AIV halves talking through a GM pipe,
each of the `BLOCKS` blocks with its own slice of the pipe buffer. The
`Pipeline` function calls the stages in order: `x` (MICROBATCHES times the
rows a stage takes) is split into microbatches, the weights stay on their
stage's device, and each activation travels to the next device through a
channel while the previous device already works on the next microbatch.

    python examples/pipeline_mlp.py            # checks against numpy
    BLOCKPIPE_TRACE=mlp.json python examples/pipeline_mlp.py
    python -m blockpipe trace-plot mlp.json -o mlp.png   # the schedule
"""

import numpy as np

import blockpipe
import blockpipe.language as pl

MICROBATCHES = 8
ROWS = 16  # rows of one microbatch
WIDTH = 64  # every layer is WIDTH x WIDTH
BLOCKS = 2
TILE_ROWS = ROWS // BLOCKS

Act = pl.Tensor[[ROWS, WIDTH], pl.FP32]
Weight = pl.Tensor[[WIDTH, WIDTH], pl.FP32]


def two_stage_mlp(microbatches=MICROBATCHES):
    """Two layers, one per device: the simplest pipeline."""
    batch = pl.Tensor[[microbatches * ROWS, WIDTH], pl.FP32]

    @pl.program
    class TwoStageMLP:
        @pl.function(type=pl.FunctionType.InCore)
        def layer(self, x: Act, w: Weight, out: pl.Out[Act]) -> Act:
            row = pl.tile.get_block_idx() * TILE_ROWS
            a = pl.load(x, [row, 0], [TILE_ROWS, WIDTH], target_memory=pl.MemorySpace.Mat)
            b = pl.load(w, [0, 0], [WIDTH, WIDTH], target_memory=pl.MemorySpace.Mat)
            acc = pl.matmul(
                pl.move(a, target_memory=pl.MemorySpace.Left),
                pl.move(b, target_memory=pl.MemorySpace.Right),
            )  # cube
            return pl.store(pl.relu(acc), [row, 0], out)  # vector

        @pl.function(type=pl.FunctionType.Orchestration, device=0)
        def stage0(self, x: Act, w0: Weight, h: pl.Out[Act]) -> Act:
            with pl.spmd(BLOCKS):
                h = self.layer(x, w0, h)
            return h

        @pl.function(type=pl.FunctionType.Orchestration, device=1)
        def stage1(self, h: Act, w1: Weight, y: pl.Out[Act]) -> Act:
            with pl.spmd(BLOCKS):
                y = self.layer(h, w1, y)
            return y

        @pl.function(type=pl.FunctionType.Pipeline, microbatches=microbatches)
        def forward(self, x: batch, w0: Weight, w1: Weight, y: pl.Out[batch]) -> batch:
            h = pl.create_tensor([ROWS, WIDTH], dtype=pl.FP32)
            h = self.stage0(x, w0, h)  # device 0
            y = self.stage1(h, w1, y)  # device 1: h travels 0 -> 1
            return y

    return TwoStageMLP


def four_stage_mlp(placement=(0, 1, 2, 3), microbatches=MICROBATCHES, schedule="gpipe"):
    """A 4-layer MLP, layer i on device placement[i]: (0, 1, 2, 3) runs one
    stage per device; (0, 1, 0, 1) puts two stages on each of 2 devices,
    which the interleaved schedule takes in turns."""
    batch = pl.Tensor[[microbatches * ROWS, WIDTH], pl.FP32]

    @pl.program
    class FourStageMLP:
        @pl.function(type=pl.FunctionType.InCore)
        def layer(self, x: Act, w: Weight, out: pl.Out[Act]) -> Act:
            row = pl.tile.get_block_idx() * TILE_ROWS
            a = pl.load(x, [row, 0], [TILE_ROWS, WIDTH], target_memory=pl.MemorySpace.Mat)
            b = pl.load(w, [0, 0], [WIDTH, WIDTH], target_memory=pl.MemorySpace.Mat)
            acc = pl.matmul(
                pl.move(a, target_memory=pl.MemorySpace.Left),
                pl.move(b, target_memory=pl.MemorySpace.Right),
            )
            return pl.store(pl.relu(acc), [row, 0], out)

        @pl.function(type=pl.FunctionType.Orchestration, device=placement[0])
        def stage0(self, x: Act, w: Weight, h: pl.Out[Act]) -> Act:
            with pl.spmd(BLOCKS):
                h = self.layer(x, w, h)
            return h

        @pl.function(type=pl.FunctionType.Orchestration, device=placement[1])
        def stage1(self, x: Act, w: Weight, h: pl.Out[Act]) -> Act:
            with pl.spmd(BLOCKS):
                h = self.layer(x, w, h)
            return h

        @pl.function(type=pl.FunctionType.Orchestration, device=placement[2])
        def stage2(self, x: Act, w: Weight, h: pl.Out[Act]) -> Act:
            with pl.spmd(BLOCKS):
                h = self.layer(x, w, h)
            return h

        @pl.function(type=pl.FunctionType.Orchestration, device=placement[3])
        def stage3(self, x: Act, w: Weight, h: pl.Out[Act]) -> Act:
            with pl.spmd(BLOCKS):
                h = self.layer(x, w, h)
            return h

        @pl.function(type=pl.FunctionType.Pipeline, microbatches=microbatches, schedule=schedule)
        def forward(
            self, x: batch, w0: Weight, w1: Weight, w2: Weight, w3: Weight, y: pl.Out[batch]
        ) -> batch:
            h0 = pl.create_tensor([ROWS, WIDTH], dtype=pl.FP32)
            h0 = self.stage0(x, w0, h0)
            h1 = pl.create_tensor([ROWS, WIDTH], dtype=pl.FP32)
            h1 = self.stage1(h0, w1, h1)
            h2 = pl.create_tensor([ROWS, WIDTH], dtype=pl.FP32)
            h2 = self.stage2(h1, w2, h2)
            y = self.stage3(h2, w3, y)
            return y

    return FourStageMLP


def reference(x, weights):
    for w in weights:
        x = np.maximum(x @ w, 0)
    return x


def main():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((MICROBATCHES * ROWS, WIDTH), dtype=np.float32)
    w = [rng.standard_normal((WIDTH, WIDTH), dtype=np.float32) / 8 for _ in range(4)]

    y = np.zeros_like(x)
    blockpipe.compile(two_stage_mlp())(x, w[0], w[1], y)
    np.testing.assert_allclose(y, reference(x, w[:2]), rtol=1e-5, atol=1e-4)
    print("OK pipeline_mlp: 2 stages on 2 devices")

    y = np.zeros_like(x)
    blockpipe.compile(four_stage_mlp())(x, *w, y)
    np.testing.assert_allclose(y, reference(x, w), rtol=1e-5, atol=1e-4)
    print("OK pipeline_mlp: 4 stages on 4 devices (gpipe)")

    y = np.zeros_like(x)
    blockpipe.compile(four_stage_mlp((0, 1, 0, 1), schedule="interleaved"))(x, *w, y)
    np.testing.assert_allclose(y, reference(x, w), rtol=1e-5, atol=1e-4)
    print("OK pipeline_mlp: 4 stages on 2 devices (interleaved)")


if __name__ == "__main__":
    main()
