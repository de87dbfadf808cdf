//===- Wmma.h - cuda-emu: warp matrix fragments (nvcuda::wmma) ---*- C++
//-*-===//
//
// The 16x16x16 fragments of <mma.h> that the CUDA target uses: A and B of
// __half or __nv_bfloat16 (row- or column-major), float accumulators. Every
// call is a warp collective, as on a GPU: all 32 lanes of the warp make it
// together (Device.h's warpExchange; a lane missing fails the launch).
//
// A fragment's 256 elements are spread over the lanes, 8 each: lane l holds
// elements 8l .. 8l + 7 of the 16x16 matrix in row-major order (on a GPU
// the spread is unspecified; code that depends on it is wrong there too).
// mma_sync computes each element of D as C plus the 16 products of A's row
// and B's column, each product exact in float (an fp16 or bf16 product
// always is), summed in float in k order.
//
// Other shapes and element types are not emulated: using them fails to
// compile, naming them.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_CUDAEMU_WMMA_H
#define BLOCKPIPE_CUDAEMU_WMMA_H

#include "blockpipe/CudaEmu/Device.h"
#include "blockpipe/CudaEmu/Half.h"

#include <type_traits>

namespace nvcuda::wmma {

struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
enum layout_t { mem_row_major, mem_col_major };

template <typename Use, int M, int N, int K, typename T, typename Layout = void>
class fragment {
  static_assert(M == 16 && N == 16 && K == 16,
                "cuda-emu: only 16x16x16 wmma fragments are emulated");
  static_assert(std::is_same<Use, accumulator>::value
                    ? std::is_same<T, float>::value
                    : std::is_same<T, __half>::value ||
                          std::is_same<T, __nv_bfloat16>::value,
                "cuda-emu: wmma fragments of __half or __nv_bfloat16 (A, B) "
                "and float (accumulator) are emulated, no other type");

public:
  static constexpr int num_elements = 16 * 16 / ::bp_cuda_emu::kWarpSize;
  using element_type = T;
  T x[num_elements];
};

namespace detail {

template <typename Layout> constexpr bool rowMajor() {
  return !std::is_same<Layout, col_major>::value;
}

/// Element (r, c) of a 16x16 matrix stored at `ptr` with leading dimension
/// `ldm`, row- or column-major.
template <typename T>
inline const T &at(const T *ptr, unsigned ldm, bool byRow, int r, int c) {
  return byRow ? ptr[r * ldm + c] : ptr[c * ldm + r];
}

template <typename Frag>
inline void loadLanes(Frag &frag, const typename Frag::element_type *ptr,
                      unsigned ldm, bool byRow, const char *op) {
  ::bp_cuda_emu::warpExchange(op, nullptr); // every lane is here
  const int lane = int(::bp_cuda_emu::laneId());
  for (int i = 0; i < Frag::num_elements; ++i) {
    const int e = lane * Frag::num_elements + i;
    frag.x[i] = at(ptr, ldm, byRow, e / 16, e % 16);
  }
}

} // namespace detail

template <typename T, typename Layout>
inline void fill_fragment(fragment<accumulator, 16, 16, 16, float, Layout> &f,
                          T value) {
  ::bp_cuda_emu::warpExchange("wmma::fill_fragment", nullptr);
  for (float &x : f.x)
    x = float(value);
}

template <typename Use, typename T, typename Layout>
inline void load_matrix_sync(fragment<Use, 16, 16, 16, T, Layout> &f,
                             const T *ptr, unsigned ldm) {
  static_assert(!std::is_same<Use, accumulator>::value,
                "an accumulator's load takes its layout_t");
  detail::loadLanes(f, ptr, ldm, detail::rowMajor<Layout>(),
                    "wmma::load_matrix_sync");
}

inline void load_matrix_sync(fragment<accumulator, 16, 16, 16, float, void> &f,
                             const float *ptr, unsigned ldm, layout_t layout) {
  detail::loadLanes(f, ptr, ldm, layout == mem_row_major,
                    "wmma::load_matrix_sync");
}

inline void
store_matrix_sync(float *ptr,
                  const fragment<accumulator, 16, 16, 16, float, void> &f,
                  unsigned ldm, layout_t layout) {
  ::bp_cuda_emu::warpExchange("wmma::store_matrix_sync", nullptr);
  const int lane = int(::bp_cuda_emu::laneId());
  for (int i = 0; i < f.num_elements; ++i) {
    const int e = lane * f.num_elements + i, r = e / 16, c = e % 16;
    (layout == mem_row_major ? ptr[r * ldm + c] : ptr[c * ldm + r]) = f.x[i];
  }
}

template <typename T, typename LayoutA, typename LayoutB>
inline void mma_sync(fragment<accumulator, 16, 16, 16, float, void> &d,
                     const fragment<matrix_a, 16, 16, 16, T, LayoutA> &a,
                     const fragment<matrix_b, 16, 16, 16, T, LayoutB> &b,
                     const fragment<accumulator, 16, 16, 16, float, void> &c) {
  using A = fragment<matrix_a, 16, 16, 16, T, LayoutA>;
  using B = fragment<matrix_b, 16, 16, 16, T, LayoutB>;
  struct Operands {
    const A *a;
    const B *b;
  } mine{&a, &b};
  constexpr int per = A::num_elements;
  void *const *lanes = ::bp_cuda_emu::warpExchange("wmma::mma_sync", &mine);
  auto elementOf = [&](auto pick, int e) {
    const Operands *o = static_cast<const Operands *>(lanes[e / per]);
    return float(pick(o)->x[e % per]);
  };
  const int lane = int(::bp_cuda_emu::laneId());
  float result[per];
  for (int i = 0; i < per; ++i) {
    const int e = lane * per + i, row = e / 16, col = e % 16;
    float sum = c.x[i];
    for (int k = 0; k < 16; ++k)
      sum += elementOf([](const Operands *o) { return o->a; }, row * 16 + k) *
             elementOf([](const Operands *o) { return o->b; }, k * 16 + col);
    result[i] = sum;
  }
  // Every lane has read the others' operands before any writes d (which
  // may be c, or be read by the caller's next collective).
  ::bp_cuda_emu::warpExchange("wmma::mma_sync", nullptr);
  for (int i = 0; i < per; ++i)
    d.x[i] = result[i];
}

} // namespace nvcuda::wmma

#endif // BLOCKPIPE_CUDAEMU_WMMA_H
