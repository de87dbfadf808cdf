//===- Npy.h - numpy's .npy and .npz files ----------------------*- C++ -*-===//
//
// What bp-run reads its inputs from and writes its outputs to: arrays in
// numpy's own formats (NEP 1: the .npy header, C order, little-endian), one
// per file or several in an .npz (a zip of .npy members, stored or
// deflated, zip64 as numpy writes it). bf16 has no numpy dtype of its own:
// it is read from any 2-byte array (ml_dtypes' bfloat16 saves as '<V2') and
// written as '<u2' holding the raw bits (`.view(ml_dtypes.bfloat16)`).
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_RUNTIME_NPY_H
#define BLOCKPIPE_RUNTIME_NPY_H

#include "blockpipe/Runtime/Target.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace blockpipe::runtime {

struct NpyArray {
  /// numpy's type string, e.g. "<f4", "|u1".
  std::string descr;
  std::vector<int64_t> shape;
  std::vector<unsigned char> data; // C order

  int64_t elements() const;
  /// Whether the array holds elements of `dtype` (its size and kind).
  bool holds(target::DType dtype) const;
};

/// The type string bp-run writes for `dtype`.
std::string npyDescr(target::DType dtype);

/// Error naming `origin` (a file, an npz member) when `bytes` is no .npy
/// this reader takes (Fortran order, big-endian, object arrays).
NpyArray parseNpy(const std::string &bytes, const std::string &origin);
std::string serializeNpy(const NpyArray &array);

/// Every member of an .npz, by name without ".npy".
std::map<std::string, NpyArray> readNpz(const std::string &path);
/// Writes `arrays` as an .npz (members stored, not compressed).
void writeNpz(const std::string &path,
              const std::map<std::string, NpyArray> &arrays);

NpyArray readNpy(const std::string &path);
void writeNpy(const std::string &path, const NpyArray &array);

} // namespace blockpipe::runtime

#endif // BLOCKPIPE_RUNTIME_NPY_H
