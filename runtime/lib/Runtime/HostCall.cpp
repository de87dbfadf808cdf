//===- HostCall.cpp - Running an orchestration on host buffers ------------===//

#include "blockpipe/Runtime/HostCall.h"
#include "blockpipe/HAL/Device.h"
#include "blockpipe/Tile/Types.h"

#include <algorithm>
#include <cstring>

namespace blockpipe::runtime {

namespace {

template <typename T> std::array<unsigned char, 8> pack(DType dtype, T value) {
  std::array<unsigned char, 8> out{};
  auto store = [&](auto v) {
    static_assert(sizeof v <= 8);
    std::memcpy(out.data(), &v, sizeof v);
  };
  switch (dtype) {
  case DType::FP32:
    store(float(value));
    break;
  case DType::FP64:
    store(double(value));
    break;
  case DType::FP16:
    store(tile::half(float(value)));
    break;
  case DType::BF16:
    store(tile::bfloat16(float(value)));
    break;
  case DType::INT32:
    store(int32_t(value));
    break;
  case DType::INT64:
    store(int64_t(value));
    break;
  case DType::INT8:
    store(int8_t(value));
    break;
  case DType::UINT8:
    store(uint8_t(value));
    break;
  case DType::INT16:
    store(int16_t(value));
    break;
  case DType::UINT16:
    store(uint16_t(value));
    break;
  case DType::UINT32:
    store(uint32_t(value));
    break;
  case DType::BOOL:
    store(bool(value != 0));
    break;
  }
  return out;
}

} // namespace

std::array<unsigned char, 8> packScalar(DType dtype, double value) {
  return pack(dtype, value);
}

std::array<unsigned char, 8> packScalar(DType dtype, int64_t value) {
  return pack(dtype, value);
}

namespace {
/// Whether the bytes of tensor argument `i` overlap another tensor
/// argument's.
bool overlapsAnother(const std::vector<HostParam> &params,
                     const std::vector<HostArg> &args, size_t i) {
  auto begin = [&](size_t k) {
    return reinterpret_cast<uintptr_t>(args[k].data);
  };
  for (size_t k = 0; k < params.size(); ++k)
    if (k != i && params[k].isTensor && args[k].bytes > 0 &&
        begin(k) < begin(i) + uintptr_t(args[i].bytes) &&
        begin(i) < begin(k) + uintptr_t(args[k].bytes))
      return true;
  return false;
}
} // namespace

DeviceCall::DeviceCall(TaskGraph &graph, const std::vector<HostParam> &params,
                       std::vector<HostArg> &args, int64_t device,
                       int64_t devices)
    : params_(params), args_(args), device_(device), tensors_(params.size()),
      argv_(params.size()), inPlace_(params.size(), false),
      before_(params.size()) {
  for (size_t i = 0; i < params.size(); ++i) {
    HostArg &arg = args[i];
    if (!params[i].isTensor) {
      argv_[i] = arg.scalar.data();
      continue;
    }
    const int64_t bytes = arg.bytes / std::max<int64_t>(devices, 1);
    std::vector<int64_t> shape(arg.shape.begin() + (devices > 0 ? 1 : 0),
                               arg.shape.end());
    const char *data = static_cast<const char *>(arg.data) + device * bytes;
    // The host buffer stays alive and untouched until the call returns: a
    // device that reads host memory reads an input in place.
    inPlace_[i] = params[i].isOutput() && params[i].inPlace && devices == 0 &&
                  graph.device().readsHostMemory() &&
                  !overlapsAnother(params, args, i);
    if (inPlace_[i]) {
      // Kept until the call completes: an interrupted call puts them back.
      before_[i].assign(data, data + bytes);
      tensors_[i] = graph.hostTensor(params[i].name, shape, params[i].dtype,
                                     const_cast<char *>(data), bytes);
    } else if (params[i].direction == "in")
      tensors_[i] = graph.inputTensor(params[i].name, shape, params[i].dtype,
                                      data, bytes);
    else if (params[i].direction == "out" && params[i].writtenWhole)
      tensors_[i] = graph.outputTensor(params[i].name, shape, params[i].dtype,
                                       data, bytes);
    else
      tensors_[i] = graph.uploadTensor(params[i].name, shape, params[i].dtype,
                                       data, bytes);
    argv_[i] = &tensors_[i];
  }
}

void DeviceCall::restoreInPlace() {
  for (size_t i = 0; i < params_.size(); ++i)
    if (inPlace_[i] && !before_[i].empty())
      std::memcpy(static_cast<char *>(args_[i].data) +
                      device_ * int64_t(before_[i].size()),
                  before_[i].data(), before_[i].size());
}

void DeviceCall::copyBack(Device &from) {
  for (size_t i = 0; i < params_.size(); ++i) {
    if (!params_[i].isOutput() || inPlace_[i])
      continue;
    const int64_t bytes = tensors_[i].bytes();
    from.copyToHost(static_cast<char *>(args_[i].data) + device_ * bytes,
                    tensors_[i].data(), bytes);
  }
}

} // namespace blockpipe::runtime
