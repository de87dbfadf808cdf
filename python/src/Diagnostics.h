//===- Diagnostics.h - Compiler diagnostics as Python exceptions -*- C++
//-*-===//

#ifndef BLOCKPIPE_PYTHON_DIAGNOSTICS_H
#define BLOCKPIPE_PYTHON_DIAGNOSTICS_H

#include "blockpipe/Compiler/Compiler.h"

#include <string>
#include <vector>

namespace blockpipe::python {

/// Raises blockpipe.CompileError built from `diagnostics`; `fallback` is the
/// message when none of them is an error.
[[noreturn]] void raiseCompileError(const std::vector<Diagnostic> &diagnostics,
                                    const std::string &fallback);

} // namespace blockpipe::python

#endif // BLOCKPIPE_PYTHON_DIAGNOSTICS_H
