//===- Target.h - The target library as the runtime uses it -----*- C++ -*-===//
//
// The target library (blockpipe/Target/) reports errors as values; the
// runtime throws. These are its throwing forms and the names the runtime
// (and generated orchestration, as rt::DType) uses from it.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_RUNTIME_TARGET_H
#define BLOCKPIPE_RUNTIME_TARGET_H

#include "blockpipe/Target/DType.h"
#include "blockpipe/Target/DeviceSpec.h"

#include <string>

namespace blockpipe::runtime {

using ::blockpipe::PipeLimits;
using target::DeviceSpec;
using target::DType;
using target::dtypeBytes;
using target::dtypeName;

/// A bundled spec; SpecError names the bundled ones when there is none.
/// "cuda-emu" is the cuda spec on the driver that emulates CUDA on the CPU.
DeviceSpec builtinSpec(const std::string &name = "cpu-sim");
/// SpecError names the file and the field.
DeviceSpec specFromFile(const std::string &path);
DeviceSpec specFromJson(const std::string &text,
                        const std::string &origin = "device spec");
/// Error for an unknown name.
DType dtypeFromName(const std::string &name);

} // namespace blockpipe::runtime

#endif // BLOCKPIPE_RUNTIME_TARGET_H
