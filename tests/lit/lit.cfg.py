# lit configuration for bp-opt / bp-translate FileCheck tests.
#
# Run a file or a directory directly with `.venv/bin/lit tests/lit/...`; the
# tools are taken from build/bin unless BP_TOOLS_DIR is given (--param).
import os

import lit.formats

config.name = "blockpipe"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py"]

repo_root = os.path.abspath(os.path.join(config.test_source_root, "..", ".."))
# Temporary files (%t) go to the build tree, never next to the tests.
config.test_exec_root = lit_config.params.get(
    "BP_LIT_EXEC_ROOT", os.path.join(repo_root, "build", "tests", "lit-output")
)
tools_dir = lit_config.params.get("BP_TOOLS_DIR", os.path.join(repo_root, "build", "bin"))
llvm_tools_dir = lit_config.params.get("LLVM_TOOLS_DIR", "/usr/lib/llvm-19/bin")

config.environment["PATH"] = os.pathsep.join(
    [tools_dir, llvm_tools_dir, config.environment.get("PATH", os.environ.get("PATH", ""))]
)
for tool in ("bp-opt", "bp-translate"):
    path = os.path.join(tools_dir, tool)
    if os.path.exists(path):
        config.available_features.add(tool)
