//===- BPAttrs.cpp - bp enums and attributes ------------------------------===//

#include "blockpipe/Dialect/BPDialect.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::bp;

#include "blockpipe/Dialect/BPEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "blockpipe/Dialect/BPAttrs.cpp.inc"

void BPDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "blockpipe/Dialect/BPAttrs.cpp.inc"
      >();
}

LogicalResult TargetAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, StringRef name,
    StringRef driver, int64_t coreGroups, int64_t aivPerCoreGroup,
    int64_t gmBytes, int64_t gmAlignment, int64_t blockStackBytes,
    DictionaryAttr localMemoryBytes, int64_t defaultSlotNumOne,
    int64_t defaultSlotNumBoth, int64_t maxPipesPerBlock, int64_t maxSlotNum) {
  // The same rules as the spec parser, which owns them: rebuild the spec as
  // JSON and let the target library judge it.
  blockpipe::target::DeviceSpec spec;
  spec.name = name.str();
  spec.driver = driver.str();
  spec.coreGroups = coreGroups;
  spec.aivPerCoreGroup = aivPerCoreGroup;
  spec.gmBytes = gmBytes;
  spec.gmAlignment = gmAlignment;
  spec.blockStackBytes = blockStackBytes;
  for (NamedAttribute entry : localMemoryBytes) {
    auto bytes = llvm::dyn_cast<IntegerAttr>(entry.getValue());
    if (!bytes)
      return emitError() << "#bp.target local_memory_bytes." << entry.getName()
                         << " must be an integer";
    spec.localMemoryBytes[entry.getName().str()] = bytes.getInt();
  }
  spec.pipe.defaultSlotNumOneDirection = defaultSlotNumOne;
  spec.pipe.defaultSlotNumBothDirections = defaultSlotNumBoth;
  spec.pipe.maxPipesPerBlock = maxPipesPerBlock;
  spec.pipe.maxSlotNum = maxSlotNum;
  auto parsed =
      blockpipe::target::DeviceSpec::fromJson(spec.toJson(), "#bp.target");
  if (!parsed)
    return emitError() << parsed.error();
  return success();
}

TargetAttr TargetAttr::get(MLIRContext *context,
                           const blockpipe::target::DeviceSpec &spec) {
  Builder builder(context);
  SmallVector<NamedAttribute> memories;
  for (const auto &[space, bytes] : spec.localMemoryBytes)
    memories.push_back(
        builder.getNamedAttr(space, builder.getI64IntegerAttr(bytes)));
  return get(context, spec.name, spec.driver, spec.coreGroups,
             spec.aivPerCoreGroup, spec.gmBytes, spec.gmAlignment,
             spec.blockStackBytes, builder.getDictionaryAttr(memories),
             spec.pipe.defaultSlotNumOneDirection,
             spec.pipe.defaultSlotNumBothDirections, spec.pipe.maxPipesPerBlock,
             spec.pipe.maxSlotNum);
}

blockpipe::target::DeviceSpec TargetAttr::getSpec() const {
  blockpipe::target::DeviceSpec spec;
  spec.name = getName().str();
  spec.driver = getDriver().str();
  spec.coreGroups = getCoreGroups();
  spec.aivPerCoreGroup = getAivPerCoreGroup();
  spec.gmBytes = getGmBytes();
  spec.gmAlignment = getGmAlignment();
  spec.blockStackBytes = getBlockStackBytes();
  for (NamedAttribute entry : getLocalMemoryBytes())
    if (auto bytes = llvm::dyn_cast<IntegerAttr>(entry.getValue()))
      spec.localMemoryBytes[entry.getName().str()] = bytes.getInt();
  spec.pipe = getPipeLimits();
  return spec;
}

blockpipe::PipeLimits TargetAttr::getPipeLimits() const {
  blockpipe::PipeLimits limits;
  limits.defaultSlotNumOneDirection = getDefaultSlotNumOneDirection();
  limits.defaultSlotNumBothDirections = getDefaultSlotNumBothDirections();
  limits.maxPipesPerBlock = getMaxPipesPerBlock();
  limits.maxSlotNum = getMaxSlotNum();
  return limits;
}

std::optional<int64_t> TargetAttr::getLocalMemory(StringRef space) const {
  if (auto bytes =
          llvm::dyn_cast_or_null<IntegerAttr>(getLocalMemoryBytes().get(space)))
    return bytes.getInt();
  return std::nullopt;
}

TargetAttr TargetAttr::lookup(Operation *op) {
  auto module = llvm::dyn_cast<ModuleOp>(op);
  if (!module)
    module = op->getParentOfType<ModuleOp>();
  if (module)
    if (auto target = module->template getAttrOfType<TargetAttr>(
            BPDialect::kTargetAttrName))
      return target;
  // The bundled spec always parses (a unit test holds it to that).
  static const blockpipe::target::DeviceSpec cpuSim =
      *blockpipe::target::DeviceSpec::builtin("cpu-sim");
  return get(op->getContext(), cpuSim);
}
