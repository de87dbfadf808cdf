//===- Diagnostics.h - Compiler diagnostics as Python exceptions -*- C++
//-*-===//

#ifndef BLOCKPIPE_PYTHON_DIAGNOSTICS_H
#define BLOCKPIPE_PYTHON_DIAGNOSTICS_H

#include "blockpipe/Compiler/Compiler.h"

#include <pybind11/pybind11.h>

#include <string>
#include <vector>

namespace blockpipe::python {

/// `diagnostics` as a list of blockpipe.Diagnostic.
pybind11::list toPython(const std::vector<Diagnostic> &diagnostics);

/// Raises blockpipe.CompileError built from `diagnostics`; `fallback` is the
/// message when none of them is an error.
[[noreturn]] void raiseCompileError(const std::vector<Diagnostic> &diagnostics,
                                    const std::string &fallback);

} // namespace blockpipe::python

#endif // BLOCKPIPE_PYTHON_DIAGNOSTICS_H
