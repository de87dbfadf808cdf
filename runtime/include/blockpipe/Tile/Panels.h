//===- Panels.h - A matmul's right operand, laid out for it -----*- C++ -*-===//
//
// `Panels` holds the right operand of a matmul in the micro-kernel's layout
// (MatmulKernels.h), loaded from GM straight into it, 16-bit elements
// widened once; `PanelsRef` reads panels held elsewhere, and `PanelCache`
// packs the right operands a launch's blocks load alike once per launch.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_TILE_PANELS_H
#define BLOCKPIPE_TILE_PANELS_H

#include "blockpipe/Tile/MatmulKernels.h"

#include <cstring>
#include <type_traits>

namespace blockpipe::tile {

/// A right operand (K x N) in the layout the float micro-kernel reads: the
/// columns in panels of `panelCols` (the last one narrower when N is not a
/// multiple), each panel K rows of its width, contiguous; 16-bit elements
/// are stored widened to float. Filled by `load` from GM; read only by
/// matmul and matmul_acc.
template <typename T, int64_t K, int64_t N> struct Panels {
  static_assert(K > 0 && N > 0, "panels have a positive shape");
  using value_type = T;
  using stored_type = detail::operand_t<T>;
  static constexpr int64_t rows = K;
  static constexpr int64_t cols = N;
  static constexpr int64_t panelCols = detail::panelCols<stored_type, N>;

  alignas(64) stored_type data[K * N];

  /// Element (k, n), wherever its panel keeps it.
  const stored_type &operator()(int64_t k, int64_t n) const {
    const int64_t first = n - n % panelCols;
    return data[detail::panelOffset<K, N, panelCols>(first, k) + (n - first)];
  }
};

namespace detail {
/// Packs the K x N window at (row, col) of a GM tensor into `dst` in the
/// layout of Panels<T, K, N>.
template <typename T, int64_t K, int64_t N>
inline void packPanels(typename Panels<T, K, N>::stored_type *__restrict dst,
                       const T *gm, int64_t ld, int64_t row, int64_t col) {
  using S = typename Panels<T, K, N>::stored_type;
  constexpr int64_t W = Panels<T, K, N>::panelCols;
  constexpr int64_t full = N - N % W;
  const T *src = gm + row * ld + col;
  // The window's rows lie ld elements apart, often a page or more, where
  // the hardware prefetchers stop: fetch a few rows ahead.
  constexpr int64_t ahead = 4, rowBytes = N * int64_t(sizeof(T));
  for (int64_t k = 0; k < K; ++k) {
    const T *line = src + k * ld;
    if (k + ahead < K)
      for (int64_t at = 0; at < rowBytes; at += 64)
        __builtin_prefetch(
            reinterpret_cast<const char *>(line + ahead * ld) + at, 0, 3);
    for (int64_t j = 0; j < full; j += W) {
      S *to = dst + panelOffset<K, N, W>(j, k);
      if constexpr (std::is_same<S, T>::value)
        std::memcpy(to, line + j, sizeof(S) * size_t(W));
      else
        for (int64_t n = 0; n < W; ++n)
          to[n] = S(line[j + n]);
    }
    if constexpr (full < N) {
      S *to = dst + panelOffset<K, N, W>(full, k);
      for (int64_t n = 0; n < N - full; ++n)
        to[n] = S(line[full + n]);
    }
  }
}
} // namespace detail

/// Loads the K x N window at (row, col) of a GM tensor into panels.
template <typename T, int64_t K, int64_t N>
inline void load(Panels<T, K, N> &dst, const T *gm, int64_t ld, int64_t row,
                 int64_t col) {
  detail::packPanels<T, K, N>(dst.data, gm, ld, row, col);
}

/// Panels held elsewhere (a PanelCache's or a block's own), read as Panels.
template <typename T, int64_t K, int64_t N> struct PanelsRef {
  using value_type = T;
  using stored_type = typename Panels<T, K, N>::stored_type;
  static constexpr int64_t rows = K;
  static constexpr int64_t cols = N;
  static constexpr int64_t panelCols = Panels<T, K, N>::panelCols;

  const stored_type *data;

  const stored_type &operator()(int64_t k, int64_t n) const {
    const int64_t first = n - n % panelCols;
    return data[detail::panelOffset<K, N, panelCols>(first, k) + (n - first)];
  }
};

/// The right operands a launch's blocks load alike, packed once per launch.
/// Every block of a launch that loads K x N windows of one Rows x Cols GM
/// tensor, which nothing writes while the launch runs, makes a PanelCache of
/// it and attaches the launch-shared memory bp_launch_shared gives for it
/// (`bytes()` of it, the first `header_bytes()` zeroed). A window at a
/// multiple of K rows and N columns then has a slot there: the first block
/// to load it packs it into the slot and marks it ready, and every later
/// block reads it in place. A block that finds the window being packed by
/// another first packs the window below it into its slot if no one has
/// (the next tile of a K loop) and then takes the window if it is ready;
/// if it is not, it packs its own copy rather than wait, so no block ever
/// waits for another; so does every load when no memory is attached (null)
/// and every other window. Slots run down the K tiles of one column strip after
/// the other, so the micro-kernel's prefetch past a tile's panels fetches the
/// next tile of a K loop.
template <typename T, int64_t K, int64_t N> class PanelCache {
public:
  using stored_type = typename Panels<T, K, N>::stored_type;

  PanelCache(int64_t rows, int64_t cols)
      : rowTiles_(rows / K), colTiles_(cols / N) {}

  int64_t tiles() const { return rowTiles_ * colTiles_; }
  /// One ready word per slot, rounded to a cache line.
  int64_t header_bytes() const { return (tiles() * 4 + 63) / 64 * 64; }
  int64_t bytes() const {
    return tiles() == 0 ? 0
                        : header_bytes() +
                              tiles() * K * N * int64_t(sizeof(stored_type));
  }
  void attach(void *memory) {
    if (!memory || tiles() == 0)
      return;
    state_ = static_cast<uint32_t *>(memory);
    slots_ = reinterpret_cast<stored_type *>(static_cast<char *>(memory) +
                                             header_bytes());
  }

  /// The window at (row, col) of `gm` (rows `ld` apart) as panels: its slot
  /// here, or `own` loaded with it.
  PanelsRef<T, K, N> load(Panels<T, K, N> &own, const T *gm, int64_t ld,
                          int64_t row, int64_t col) const {
    if (slots_ && row >= 0 && col >= 0 && row % K == 0 && col % N == 0 &&
        row / K < rowTiles_ && col / N < colTiles_) {
      const int64_t slot = col / N * rowTiles_ + row / K;
      stored_type *data = slots_ + slot * K * N;
      uint32_t seen = __atomic_load_n(state_ + slot, __ATOMIC_ACQUIRE);
      if (seen == kReady)
        return {data};
      if (seen == kEmpty && tryPack(slot, gm, ld, row, col))
        return {data};
      // Another block packs this window. Rather than pack a copy of its
      // own, this one packs the window below it (which a K loop loads
      // next) into its slot, which takes about as long; by then the window
      // is usually ready. Blocks that run in step split the packing so.
      if (row / K + 1 < rowTiles_ &&
          __atomic_load_n(state_ + slot + 1, __ATOMIC_RELAXED) == kEmpty &&
          tryPack(slot + 1, gm, ld, row + K, col) &&
          __atomic_load_n(state_ + slot, __ATOMIC_ACQUIRE) == kReady)
        return {data};
    }
    detail::packPanels<T, K, N>(own.data, gm, ld, row, col);
    return {own.data};
  }

private:
  /// Packs the window at (row, col) into `slot` if no one has started it:
  /// whether this call packed it.
  bool tryPack(int64_t slot, const T *gm, int64_t ld, int64_t row,
               int64_t col) const {
    uint32_t expected = kEmpty;
    if (!__atomic_compare_exchange_n(state_ + slot, &expected, kPacking, false,
                                     __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
      return false;
    detail::packPanels<T, K, N>(slots_ + slot * K * N, gm, ld, row, col);
    __atomic_store_n(state_ + slot, kReady, __ATOMIC_RELEASE);
    return true;
  }

  static constexpr uint32_t kEmpty = 0, kPacking = 1, kReady = 2;
  int64_t rowTiles_, colTiles_;
  uint32_t *state_ = nullptr;
  stored_type *slots_ = nullptr;
};

namespace detail {

template <typename X> struct IsPanels : std::false_type {};
template <typename T, int64_t K, int64_t N>
struct IsPanels<Panels<T, K, N>> : std::true_type {};
template <typename T, int64_t K, int64_t N>
struct IsPanels<PanelsRef<T, K, N>> : std::true_type {};

} // namespace detail

} // namespace blockpipe::tile

#endif // BLOCKPIPE_TILE_PANELS_H
