"""The import hook `pypto-test` and `pypto` install: pypto's module names
resolve to blockpipe (pypto.language is blockpipe.language), the names
blockpipe lacks are placeholders whose use is a SKIP naming them, and
outcome.classify tells a SKIP from a FAIL."""

import importlib
import pathlib

import pytest

import blockpipe.language
from blockpipe.errors import CompileError
from blockpipe.language.unsupported import NotSupportedError, Unsupported
from blockpipe.pypto import cli, hook, outcome


@pytest.fixture
def hooked():
    hook.install()
    yield
    hook.uninstall()


def test_pypto_language_is_blockpipe_language(hooked):
    import pypto
    import pypto.language as pl

    assert pl is blockpipe.language and pypto.language is pl
    assert pl.__spec__.name == "blockpipe.language"
    import pypto.language.distributed as pld

    assert isinstance(pld.world_size, Unsupported)


def test_pypto_runtime_and_enums(hooked):
    from pypto.backend import BackendType
    from pypto.ir.pass_manager import OptimizationStrategy
    from pypto.runtime import RunConfig, run
    from pypto.runtime.runner import RunConfig as SameRunConfig

    assert RunConfig is SameRunConfig and callable(run)
    config = RunConfig(platform="a5sim", rtol=1e-3)
    assert (config.platform, config.rtol, config.atol) == ("a5sim", 1e-3, 1e-5)
    assert config.strategy is OptimizationStrategy.Default
    assert (
        BackendType.Ascend950 is BackendType.Ascend950 and BackendType.Ascend950.name == "Ascend950"
    )
    from pypto import ir
    from pypto.ir.compiled_program import CompiledProgram

    assert ir.compile is importlib.import_module("pypto.ir").compile
    assert isinstance(object.__new__(blockpipe.CompiledProgram), CompiledProgram)


def test_a_compiled_program_returns_torch_tensors(hooked):
    """pypto's CompiledProgram returns torch tensors: the outputs it was
    given, and new ones for outputs left out (09_paged_attention_spmd
    checks isinstance(output, torch.Tensor))."""
    import numpy as np
    import torch
    from pypto.runtime import run

    import blockpipe.language as pl

    @pl.program
    class Doubled:
        @pl.function(type=pl.FunctionType.Opaque)
        def main(
            self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]
        ) -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.at(level=pl.Level.CORE_GROUP):
                y = pl.store(pl.add(pl.load(x, [0, 0], [16, 16]), 1.0), [0, 0], y)
            return y

    x = torch.ones(16, 16, dtype=torch.float32)
    compiled = run(Doubled)
    made = compiled(x)
    assert isinstance(made, torch.Tensor)
    np.testing.assert_array_equal(np.asarray(made), np.full((16, 16), 2, np.float32))
    given = torch.zeros(16, 16, dtype=torch.float32)
    assert compiled(x, given) is given
    np.testing.assert_array_equal(np.asarray(given), np.full((16, 16), 2, np.float32))


def test_a_name_blockpipe_lacks_is_a_placeholder_until_used(hooked):
    from pypto.backend.pto_backend import PartialCodegenError
    from pypto.runtime.device_runner import execute_on_device

    assert issubclass(PartialCodegenError, Exception)
    with pytest.raises(NotSupportedError, match="blockpipe lacks pypto.runtime.device_runner"):
        execute_on_device()
    import pypto.backend as backend

    with pytest.raises(NotSupportedError, match=r"pypto.backend.Backend910B.instance"):
        backend.Backend910B.instance()


def test_harness_names(hooked):
    from harness.core import TestRunner
    from harness.core.harness import ONBOARD_PLATFORMS, PLATFORMS, DataType, PTOTestCase

    assert [p.values[0] for p in PLATFORMS] == ["a2a3sim", "a5sim", "a2a3", "a5"]
    assert [p.id for p in ONBOARD_PLATFORMS] == ["a2a3", "a5"]
    assert DataType.UINT32.numpy_dtype == "uint32" and DataType.INT8.numpy_dtype == "int8"
    assert TestRunner().config.platform == "a2a3sim"
    with pytest.raises(TypeError):
        PTOTestCase()  # abstract


def test_the_checkout_root_is_above_examples_and_tests(tmp_path):
    (tmp_path / "pyproject.toml").write_text("")
    deep = tmp_path / "tests" / "st" / "runtime"
    deep.mkdir(parents=True)
    assert cli.checkout_root(deep / "test_x.py") == tmp_path
    assert cli.checkout_root(pathlib.Path("/")) is None


def raised(fn):
    try:
        fn()
    except BaseException as error:  # noqa: BLE001
        return outcome.classify(error)
    raise AssertionError("did not raise")


def test_outcomes():
    assert raised(lambda: blockpipe.language.no_such_name) == (
        "SKIP",
        "blockpipe lacks pl.no_such_name",
    )
    error = CompileError("pl.X is not supported", file="/a/b/test_x.py", line=7)
    assert outcome.classify(error) == ("SKIP", "CompileError: pl.X is not supported (test_x.py:7)")
    assert raised(lambda: importlib.import_module("no_such_module_xyz")) == (
        "SKIP",
        "needs module no_such_module_xyz",
    )
    assert raised(lambda: pytest.skip("no board")) == ("SKIP", "no board")
    # (`M * 2` is a composite dim now; `**` is still refused.)
    assert raised(lambda: blockpipe.language.dynamic("M") ** 2)[0] == "SKIP"
    assert raised(lambda: [][1]) == ("FAIL", "IndexError: list index out of range")
    assert raised(lambda: exec("assert 1 == 2, 'wrong <x at 0x7f00ab>'")) == (
        "FAIL",
        "AssertionError: wrong <x>",
    )
