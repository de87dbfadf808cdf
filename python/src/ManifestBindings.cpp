//===- ManifestBindings.cpp - kernel_config.json as Python objects --------===//
//
// blockpipe._core.parse_manifest: the manifest codegen wrote, read by
// target::parseManifest (the one reader, also bp-run's and the pipeline
// runner's) into read-only objects whose fields are named as in
// kernel_config.json (codegen/kernel_config.md). Enumerations read as their
// JSON spelling ("tensor", "inout", "fp32"), dynamic dims as None.
//
//===----------------------------------------------------------------------===//

#include "blockpipe/Target/Manifest.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;
namespace target = blockpipe::target;

namespace blockpipe::python {

namespace {

std::string dtypeOf(target::DType dtype) { return target::dtypeName(dtype); }

} // namespace

void bindManifest(py::module_ &m) {
  using namespace target;
  py::class_<ManifestParam>(m, "ManifestParam",
                            "A parameter of a kernel, orchestration or "
                            "pipeline (kernel_config.json's signature).")
      .def_readonly("name", &ManifestParam::name)
      .def_property_readonly(
          "kind", [](const ManifestParam &p) { return paramKindName(p.kind); })
      .def_property_readonly(
          "dir", [](const ManifestParam &p) { return paramDirName(p.dir); })
      .def_property_readonly(
          "dtype", [](const ManifestParam &p) { return dtypeOf(p.dtype); })
      .def_readonly("shape", &ManifestParam::shape)
      .def_readonly("abi_slot", &ManifestParam::abiSlot)
      .def_readonly("written_whole", &ManifestParam::writtenWhole)
      .def_readonly("in_place", &ManifestParam::inPlace)
      .def_readonly("split", &ManifestParam::split);
  py::class_<ManifestPipe>(m, "ManifestPipe")
      .def_readonly("id", &ManifestPipe::id)
      .def_readonly("dir_mask", &ManifestPipe::dirMask)
      .def_readonly("slot_size", &ManifestPipe::slotSize)
      .def_readonly("slot_num", &ManifestPipe::slotNum)
      .def_readonly("offset", &ManifestPipe::offset)
      .def_readonly("bytes", &ManifestPipe::bytes);
  py::class_<ManifestPipeLayout>(m, "ManifestPipeLayout")
      .def_readonly("arg_index", &ManifestPipeLayout::argIndex)
      .def_readonly("abi_slot", &ManifestPipeLayout::abiSlot)
      .def_readonly("per_block_bytes", &ManifestPipeLayout::perBlockBytes)
      .def_readonly("pipes", &ManifestPipeLayout::pipes);
  py::class_<ManifestKernelHalf>(m, "ManifestKernelHalf")
      .def_readonly("function", &ManifestKernelHalf::function)
      .def_readonly("symbol", &ManifestKernelHalf::symbol)
      .def_readonly("source", &ManifestKernelHalf::source);
  py::class_<ManifestKernel>(m, "ManifestKernel")
      .def_readonly("func_id", &ManifestKernel::funcId)
      .def_readonly("name", &ManifestKernel::name)
      .def_property_readonly(
          "core_type",
          [](const ManifestKernel &k) { return coreTypeName(k.coreType); })
      .def_readonly("symbol", &ManifestKernel::symbol)
      .def_readonly("source", &ManifestKernel::source)
      .def_readonly("aic", &ManifestKernel::aic)
      .def_readonly("aiv", &ManifestKernel::aiv)
      .def_readonly("signature", &ManifestKernel::signature)
      .def_readonly("pipe_layout", &ManifestKernel::pipeLayout)
      .def_property_readonly("split",
                             [](const ManifestKernel &k) {
                               switch (k.split) {
                               case SplitMode::UpDown:
                                 return "up_down";
                               case SplitMode::LeftRight:
                                 return "left_right";
                               case SplitMode::None:
                                 break;
                               }
                               return "none";
                             })
      .def_readonly("launch_blocks", &ManifestKernel::launchBlocks);
  py::class_<ManifestLaunch>(m, "ManifestLaunch")
      .def_readonly("kernel", &ManifestLaunch::kernel)
      .def_readonly("core_num", &ManifestLaunch::coreNum,
                    "The block count; None when known only at run time.")
      .def_readonly("sync_start", &ManifestLaunch::syncStart)
      .def_readonly("pipe_buffer_per_block_bytes",
                    &ManifestLaunch::pipeBufferPerBlockBytes);
  py::class_<ManifestOrchestration>(m, "ManifestOrchestration")
      .def_readonly("name", &ManifestOrchestration::name)
      .def_readonly("symbol", &ManifestOrchestration::symbol)
      .def_readonly("function", &ManifestOrchestration::function)
      .def_readonly("source", &ManifestOrchestration::source)
      .def_readonly("header", &ManifestOrchestration::header)
      .def_readonly("device", &ManifestOrchestration::device)
      .def_readonly("signature", &ManifestOrchestration::signature)
      .def_readonly("launches", &ManifestOrchestration::launches);
  py::class_<ManifestTensor>(m, "ManifestTensor")
      .def_property_readonly(
          "dtype", [](const ManifestTensor &t) { return dtypeOf(t.dtype); })
      .def_readonly("shape", &ManifestTensor::shape);
  py::class_<ManifestStageArg>(m, "ManifestStageArg")
      .def_property_readonly(
          "source",
          [](const ManifestStageArg &a) { return stageInputName(a.from); },
          "kernel_config.json's `from`: param, activation or output.")
      .def_readonly("param", &ManifestStageArg::param)
      .def_readonly("split", &ManifestStageArg::split);
  py::class_<ManifestStage>(m, "ManifestStage")
      .def_readonly("name", &ManifestStage::name)
      .def_readonly("symbol", &ManifestStage::symbol)
      .def_readonly("device", &ManifestStage::device)
      .def_readonly("directory", &ManifestStage::directory)
      .def_readonly("args", &ManifestStage::args)
      .def_readonly("input", &ManifestStage::input)
      .def_readonly("output", &ManifestStage::output);
  py::class_<ManifestPipeline>(m, "ManifestPipeline")
      .def_readonly("name", &ManifestPipeline::name)
      .def_readonly("microbatches", &ManifestPipeline::microbatches)
      .def_property_readonly("schedule",
                             [](const ManifestPipeline &p) {
                               return pipelineScheduleName(p.schedule);
                             })
      .def_readonly("channel", &ManifestPipeline::channel)
      .def_readonly("signature", &ManifestPipeline::signature)
      .def_readonly("stages", &ManifestPipeline::stages);
  py::class_<ManifestTransfer>(m, "ManifestTransfer")
      .def_readonly("channel", &ManifestTransfer::channel)
      .def_readonly("source_target_pairs", &ManifestTransfer::sourceTargetPairs)
      .def_property_readonly(
          "dtype", [](const ManifestTransfer &t) { return dtypeOf(t.dtype); })
      .def_readonly("shape", &ManifestTransfer::shape);
  py::class_<ManifestMesh>(m, "ManifestMesh")
      .def_readonly("devices", &ManifestMesh::devices)
      .def_readonly("transfers", &ManifestMesh::transfers);
  py::class_<Manifest>(m, "Manifest",
                       "A compiled program's kernel_config.json, as "
                       "target::parseManifest reads it.")
      .def_readonly("schema_version", &Manifest::schemaVersion)
      .def_readonly("generator", &Manifest::generator)
      .def_readonly("target", &Manifest::target)
      .def_readonly("project", &Manifest::project)
      .def_readonly("library", &Manifest::library)
      .def_readonly("kernel_table_symbol", &Manifest::kernelTableSymbol)
      .def_readonly("kernels", &Manifest::kernels)
      .def_readonly("orchestrations", &Manifest::orchestrations)
      .def_readonly("pipelines", &Manifest::pipelines)
      .def_readonly("mesh", &Manifest::mesh);
  m.def(
      "parse_manifest",
      [](const std::string &text, const std::string &source) {
        Expected<Manifest> manifest = parseManifest(text, source);
        if (!manifest)
          throw py::value_error(manifest.error());
        return std::move(*manifest);
      },
      py::arg("text"), py::arg("source") = "kernel_config.json",
      "Reads kernel_config.json's text; ValueError names the field that is "
      "wrong.");
}

} // namespace blockpipe::python
