"""Mesh programs on 4 cpu-sim devices against numpy: collective permutes,
send/recv, mixed kernels, pl.device_id and a core_num known only on the
device, and the mesh's transfer counters.

Each program holds several orchestrations so that it builds once."""

import numpy as np
import pytest

import blockpipe
import blockpipe.language as pl

DEVICES = 4
N = 16
T = pl.Tensor[[N, N], pl.FP32]
TI = pl.Tensor[[N, N], pl.INT32]

RING = [[0, 1], [1, 2], [2, 3], [3, 0]]
SHIFT = [[0, 1], [1, 2], [2, 3]]
SWAPS = [[0, 1], [1, 0], [2, 3], [3, 2]]
IDENTITY = [[0, 0], [1, 1], [2, 2], [3, 3]]
SEND_RECV = [[0, 2], [1, 3]]


def permuted(x: np.ndarray, pairs) -> np.ndarray:
    """StableHLO collective_permute over axis 0: a target gets its source's
    data, every other device zeros."""
    y = np.zeros_like(x)
    for source, target in pairs:
        y[target] = x[source]
    return y


@pl.program
class Permutes:
    @pl.function(type=pl.FunctionType.InCore)
    def double(self, x: T, out: pl.Out[T]) -> T:
        t = pl.load(x, [0, 0], [N, N])
        return pl.store(pl.add(t, t), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def ring(self, x: T, y: pl.Out[T]) -> T:
        t = pl.create_tensor([N, N], dtype=pl.FP32)
        t = self.double(x, t)
        y = pl.collective_permute(t, y, source_target_pairs=RING)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def shift(self, x: T, y: pl.Out[T]) -> T:
        y = pl.collective_permute(x, y, source_target_pairs=[[0, 1], [1, 2], [2, 3]], channel=1)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def swaps(self, x: T, y: pl.Out[T]) -> T:
        y = pl.collective_permute(
            x, y, source_target_pairs=[[0, 1], [1, 0], [2, 3], [3, 2]], channel=2
        )
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def identity(self, x: T, y: pl.Out[T]) -> T:
        y = pl.collective_permute(x, y, source_target_pairs=[[0, 0], [1, 1], [2, 2], [3, 3]])
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def ring_int32(self, x: TI, y: pl.Out[TI]) -> TI:
        y = pl.collective_permute(x, y, source_target_pairs=RING, channel=3)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def send_recv(self, x: T, y: pl.Out[T]) -> T:
        # Sources 0 and 1 send their y; targets 2 and 3 overwrite theirs.
        y = self.double(x, y)
        pl.send(y, source_target_pairs=[[0, 2], [1, 3]], channel=4)
        y = pl.recv(y, source_target_pairs=[[0, 2], [1, 3]], channel=4)
        return y


# orchestration -> (source_target_pairs, what it permutes as a function of x)
CASES = {
    "ring": (RING, lambda x: 2 * x),
    "shift": (SHIFT, lambda x: x),
    "swaps": (SWAPS, lambda x: x),
    "identity": (IDENTITY, lambda x: x),
}


@pytest.fixture(scope="module")
def permutes():
    return blockpipe.compile(Permutes, devices=DEVICES, quiet=True)


def inputs(seed: int, dtype=np.float32) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-1000, 1000, (DEVICES, N, N), dtype=dtype)
    return rng.standard_normal((DEVICES, N, N), dtype=dtype)


@pytest.mark.parametrize("name", CASES)
def test_collective_permute(permutes, name):
    pairs, sent = CASES[name]
    x = inputs(1)
    # Garbage everywhere, so zeros and copies are known to be written.
    y = np.full_like(x, 7.5)
    assert permutes.run(name, x, y) is y
    np.testing.assert_array_equal(y, permuted(sent(x), pairs))


def test_ring_moves_each_device_to_the_next(permutes):
    x = inputs(2)
    y = np.zeros_like(x)
    permutes.run("ring", x, y)
    for d in range(DEVICES):
        np.testing.assert_array_equal(y[d], 2 * x[(d - 1) % DEVICES])


def test_shift_zeroes_the_device_no_one_sends_to(permutes):
    x = inputs(3)
    y = np.full_like(x, -3.0)
    permutes.run("shift", x, y)
    assert (y[0] == 0).all()
    np.testing.assert_array_equal(y[1:], x[:-1])


def test_int32_permute(permutes):
    x = inputs(4, np.int32)
    y = np.full_like(x, 12345)
    permutes.run("ring_int32", x, y)
    np.testing.assert_array_equal(y, np.roll(x, 1, axis=0))


def test_send_recv_targets_receive_and_sources_keep_their_own(permutes):
    x = inputs(5)
    y = np.full_like(x, 9.0)
    permutes.run("send_recv", x, y)
    expected = 2 * x
    for source, target in SEND_RECV:
        expected[target] = 2 * x[source]
    np.testing.assert_array_equal(y, expected)
    np.testing.assert_array_equal(y[:2], 2 * x[:2])  # the sources' own data


def test_axis_0_must_be_the_mesh(permutes):
    x = inputs(6)[:3]
    y = np.full_like(x, 1.0)
    with pytest.raises(
        ValueError,
        match=r"parameter 'x' must have shape 4x16x16 \(axis 0: the 4 "
        r"devices of the mesh\), got 3x16x16",
    ):
        permutes.run("ring", x, y)
    assert (y == 1.0).all()
    with pytest.raises(ValueError, match="mesh"):
        permutes.run("ring", x.reshape(3 * N, N), y)


def expected_counters(pairs, nbytes: int, calls: int) -> dict:
    """After `calls` calls: pairs [i, i] copy on the device; every other pair
    is one transfer per call, device to device, on a channel made once."""
    moving = [(s, t) for s, t in pairs if s != t]
    return {
        "device_to_device_bytes": calls * len(moving) * nbytes,
        "host_staged_bytes": 0,
        "cross_rank_bytes": 0,
        "transfers": calls * len(moving),
        "channels_created": len(moving) if calls else 0,
        "rank": 0,
    }


@pytest.mark.parametrize("name", [*CASES, "send_recv"])
def test_transfer_counters_and_channel_reuse(name):
    pairs = SEND_RECV if name == "send_recv" else CASES[name][0]
    # A CompiledProgram of its own (the build is cached): a fresh mesh.
    program = blockpipe.compile(Permutes, devices=DEVICES, quiet=True)
    x = inputs(7)
    y = np.zeros_like(x)
    assert program.transfer_counters() == expected_counters(pairs, x[0].nbytes, 0)
    program.run(name, x, y)
    assert program.transfer_counters() == expected_counters(pairs, x[0].nbytes, 1)
    program.run(name, x, y)
    assert program.transfer_counters() == expected_counters(pairs, x[0].nbytes, 2)


ROWS, K, COLS, TILE = 64, 32, 16, 16
X = pl.Tensor[[ROWS, K], pl.FP32]
W = pl.Tensor[[K, COLS], pl.FP32]
R = pl.Tensor[[ROWS, COLS], pl.FP32]
S = pl.Tensor[[TILE, COLS], pl.FP32]


@pl.program
class MeshCompute:
    @pl.function(type=pl.FunctionType.InCore)
    def project(self, x: X, w: W, r: R, out: pl.Out[R]) -> R:
        row = pl.tile.get_block_idx() * TILE
        acc = pl.matmul(pl.load(x, [row, 0], [TILE, K]), pl.load(w, [0, 0], [K, COLS]))  # cube
        return pl.store(pl.add(acc, pl.load(r, [row, 0], [TILE, COLS])), [row, 0], out)  # vector

    @pl.function(type=pl.FunctionType.InCore)
    def copy(self, r: R, out: pl.Out[R]) -> R:
        row = pl.tile.get_block_idx() * TILE
        return pl.store(pl.load(r, [row, 0], [TILE, COLS]), [row, 0], out)

    @pl.function(type=pl.FunctionType.InCore)
    def pick(self, r: R, d: pl.Scalar[pl.INDEX], out: pl.Out[S]) -> S:
        return pl.store(pl.load(r, [d * TILE, 0], [TILE, COLS]), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: X, w: W, r: R, y: pl.Out[R]) -> R:
        t = pl.create_tensor([ROWS, COLS], dtype=pl.FP32)
        with pl.spmd(ROWS // TILE):
            t = self.project(x, w, r, t)
        y = pl.collective_permute(t, y, source_target_pairs=RING)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def first_blocks(self, x: X, w: W, r: R, y: pl.Out[R]) -> R:
        # Device d projects its first d + 1 row blocks; the rest stay r.
        with pl.spmd(ROWS // TILE):
            y = self.copy(r, y)
        with pl.spmd(pl.device_id() + 1):
            y = self.project(x, w, r, y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def own_block(self, r: R, y: pl.Out[S]) -> S:
        y = self.pick(r, pl.device_id(), y)
        return y


@pytest.fixture(scope="module")
def compute():
    return blockpipe.compile(MeshCompute, devices=DEVICES, quiet=True)


def mixed_inputs(seed: int):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((DEVICES, ROWS, K), dtype=np.float32)
    w = rng.standard_normal((DEVICES, K, COLS), dtype=np.float32)
    r = rng.standard_normal((DEVICES, ROWS, COLS), dtype=np.float32)
    return x, w, r


def test_mixed_kernel_on_every_device_then_permute(compute):
    # The kernel really is split into cube and vector halves.
    assert {"kernels/aic/project_aic.cpp", "kernels/aiv/project_aiv.cpp"} <= set(compute.artifacts)
    x, w, r = mixed_inputs(10)
    y = np.full((DEVICES, ROWS, COLS), 4.0, dtype=np.float32)
    compute(x, w, r, y)
    np.testing.assert_allclose(y, permuted(x @ w + r, RING), rtol=1e-5, atol=1e-4)


def test_a_second_call_sees_new_inputs(compute):
    y = np.zeros((DEVICES, ROWS, COLS), dtype=np.float32)
    for seed in (11, 12):
        x, w, r = mixed_inputs(seed)
        compute(x, w, r, y)
        np.testing.assert_allclose(y, permuted(x @ w + r, RING), rtol=1e-5, atol=1e-4)


def test_core_num_from_the_device_id(compute):
    x, w, r = mixed_inputs(13)
    y = np.full((DEVICES, ROWS, COLS), 5.0, dtype=np.float32)
    compute.run("first_blocks", x, w, r, y)
    projected = x @ w + r
    for d in range(DEVICES):
        rows = (d + 1) * TILE
        np.testing.assert_allclose(y[d, :rows], projected[d, :rows], rtol=1e-5, atol=1e-4)
        np.testing.assert_array_equal(y[d, rows:], r[d, rows:])


def test_device_id_as_a_kernel_scalar(compute):
    _, _, r = mixed_inputs(14)
    y = np.zeros((DEVICES, TILE, COLS), dtype=np.float32)
    compute.run("own_block", r, y)
    for d in range(DEVICES):
        np.testing.assert_array_equal(y[d], r[d, d * TILE : (d + 1) * TILE])


@pl.program
class EveryDeviceFails:
    @pl.function(type=pl.FunctionType.InCore)
    def shifted(self, r: R, d: pl.Scalar[pl.INDEX], out: pl.Out[S]) -> S:
        # Past the end of r on every device.
        t = pl.load(r, [ROWS + d * TILE, 0], [TILE, COLS])
        return pl.store(t, [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, r: R, y: pl.Out[S]) -> S:
        t = pl.create_tensor([TILE, COLS], dtype=pl.FP32)
        with pl.spmd(1):
            t = self.shifted(r, pl.device_id(), t)
        y = pl.collective_permute(t, y, source_target_pairs=RING)
        return y

    @pl.function(type=pl.FunctionType.InCore)
    def spread(self, r: R, d: pl.Scalar[pl.INDEX], out: pl.Out[S]) -> S:
        # Within r on devices 0 and 1, past its end on devices 2 and 3.
        t = pl.load(r, [d * (ROWS - TILE), 0], [TILE, COLS])
        return pl.store(t, [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def some_fail(self, r: R, y: pl.Out[S]) -> S:
        t = pl.create_tensor([TILE, COLS], dtype=pl.FP32)
        with pl.spmd(1):
            t = self.spread(r, pl.device_id(), t)
        y = pl.collective_permute(t, y, source_target_pairs=RING)
        return y


def test_a_call_whose_every_device_fails_ends_naming_each():
    """Each device's recv waits for a send its source will never make, as
    that source failed too: the call still ends, with every device's
    failure, and the outputs stay untouched."""
    program = blockpipe.compile(EveryDeviceFails, devices=DEVICES, quiet=True)
    r = np.ones((DEVICES, ROWS, COLS), np.float32)
    y = np.full((DEVICES, TILE, COLS), 7.0, np.float32)
    with pytest.raises(RuntimeError) as info:
        program(r, y)
    message = str(info.value)
    assert f"mesh program failed on {DEVICES} of {DEVICES} devices" in message, message
    for d in range(DEVICES):
        assert f"device {d}: task 1: kernel 'shifted' block 0" in message, message
    np.testing.assert_array_equal(y, 7.0)


def test_a_mesh_failure_tells_its_root_causes_first_and_once():
    """Devices 2 and 3 fail on their own; device 0 only because its recv
    from device 3 cannot happen (device 1's send to 2 is buffered, so it
    succeeds): one line per failing device, the two causes first, each told
    once."""
    program = blockpipe.compile(EveryDeviceFails, devices=DEVICES, quiet=True)
    r = np.ones((DEVICES, ROWS, COLS), np.float32)
    y = np.full((DEVICES, TILE, COLS), 7.0, np.float32)
    with pytest.raises(RuntimeError) as info:
        program.run("some_fail", r, y)
    message = str(info.value)
    lines = message.splitlines()
    assert lines[0] == f"mesh program failed on 3 of {DEVICES} devices:", lines
    devices = [line.split(":")[0].strip() for line in lines[1:]]
    assert sorted(devices[:2]) == ["device 2", "device 3"] and devices[2:] == ["device 0"], lines
    for line in lines[1:3]:
        assert "kernel 'spread' block 0" in line and "outside the tensor's" in line, line
    assert lines[3].endswith("from device 3: device 3 failed (above)"), lines
    assert message.count("outside the tensor's") == 2, message
    np.testing.assert_array_equal(y, 7.0)
