// The tile library against naive references, over many shapes and dtypes.
// Built as C++17 with -Werror, as generated kernels are.
#include "blockpipe/Tile/TileLib.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace bt = blockpipe::tile;
using bt::bfloat16;
using bt::half;
using bt::Space;
using bt::Tile;

namespace {

template <typename T> T fromDouble(double value) {
  return T(static_cast<bt::compute_t<T>>(value));
}
template <typename T> double toDouble(T value) {
  return double(static_cast<bt::compute_t<T>>(value));
}

/// Relative tolerance of one rounding to T.
template <typename T> double eps() {
  if (std::is_same<T, half>::value)
    return 1.0 / 1024;
  if (std::is_same<T, bfloat16>::value)
    return 1.0 / 128;
  if (std::is_same<T, float>::value)
    return 1e-6;
  return 0;
}

template <typename T>
void expectNear(double want, T got, double scale, const char *what,
                int64_t index) {
  const double tolerance = 2 * eps<T>() * (std::fabs(want) + scale) + 1e-12;
  ASSERT_NEAR(toDouble(got), want, tolerance) << what << " at " << index;
}

template <typename T, int64_t R, int64_t C, Space S = Space::Vec>
std::unique_ptr<Tile<T, R, C, S>> randomTile(std::mt19937 &rng, double lo = -4,
                                             double hi = 4) {
  auto tile = std::make_unique<Tile<T, R, C, S>>();
  std::uniform_real_distribution<double> dist(lo, hi);
  for (int64_t i = 0; i < R * C; ++i) {
    double v = dist(rng);
    if (std::is_integral<T>::value)
      v = std::round(v);
    tile->data[i] = fromDouble<T>(v);
  }
  return tile;
}

template <typename T, int64_t R, int64_t C> void checkElementwise() {
  std::mt19937 rng(R * 131 + C);
  auto a = randomTile<T, R, C>(rng);
  auto b = randomTile<T, R, C>(rng, 0.5, 4); // no division by ~0
  auto out = std::make_unique<Tile<T, R, C>>();
  auto ref = [&](auto op, const char *what) {
    for (int64_t i = 0; i < R * C; ++i) {
      const double x = toDouble(a->data[i]), y = toDouble(b->data[i]);
      expectNear<T>(toDouble(fromDouble<T>(op(x, y))), out->data[i], 0, what,
                    i);
    }
  };
  bt::binary<bt::op::Add>(*out, *a, *b);
  ref([](double x, double y) { return x + y; }, "add");
  bt::binary<bt::op::Sub>(*out, *a, *b);
  ref([](double x, double y) { return x - y; }, "sub");
  bt::binary<bt::op::Mul>(*out, *a, *b);
  ref([](double x, double y) { return x * y; }, "mul");
  bt::binary<bt::op::Max>(*out, *a, *b);
  ref([](double x, double y) { return x > y ? x : y; }, "maximum");
  bt::binary<bt::op::Min>(*out, *a, *b);
  ref([](double x, double y) { return x < y ? x : y; }, "minimum");
  if (!std::is_integral<T>::value) {
    bt::binary<bt::op::Div>(*out, *a, *b);
    ref([](double x, double y) { return x / y; }, "div");
  }
  bt::binary<bt::op::Add>(*out, *a, bt::compute_t<T>(3));
  ref([](double x, double) { return x + 3; }, "add scalar");
  bt::binary<bt::op::Mul>(*out, *a, bt::compute_t<T>(-2));
  ref([](double x, double) { return x * -2; }, "mul scalar");
  bt::binary<bt::op::Max>(*out, *a, bt::compute_t<T>(0));
  ref([](double x, double) { return x > 0 ? x : 0; }, "maximum scalar");
  bt::unary<bt::op::Relu>(*out, *a);
  ref([](double x, double) { return x > 0 ? x : 0; }, "relu");
  bt::unary<bt::op::Neg>(*out, *a);
  ref([](double x, double) { return -x; }, "neg");
  if (!std::is_integral<T>::value) {
    bt::unary<bt::op::Exp>(*out, *a);
    ref([](double x, double) { return std::exp(x); }, "exp");
  }
  // In place.
  *out = *a;
  bt::binary<bt::op::Add>(*out, *out, *out);
  ref([](double x, double) { return 2 * x; }, "add in place");

  // The tile-tile forms on views of GM and into windows of GM: a and b lie
  // at (1, 2) of wider tensors, results go to the window at (2, 3) of a
  // third, whose other elements must stay as they were.
  const int64_t ld = C + 5, gmRows = R + 3;
  const T outside = fromDouble<T>(-9);
  std::vector<T> ga(size_t(gmRows * ld), fromDouble<T>(7)), gb(ga),
      go(size_t(gmRows * ld), outside);
  for (int64_t i = 0; i < R; ++i)
    for (int64_t j = 0; j < C; ++j) {
      ga[size_t((1 + i) * ld + 2 + j)] = (*a)(i, j);
      gb[size_t((1 + i) * ld + 2 + j)] = (*b)(i, j);
    }
  const auto va = bt::view<R, C>(ga.data(), ld, 1, 2);
  const auto vb = bt::view<R, C>(gb.data(), ld, 1, 2);
  const auto wo = bt::window<R, C>(go.data(), ld, 2, 3);
  // Reads the window back into `out` and checks what lies around it.
  auto fromWindow = [&](const char *what) {
    for (int64_t i = 0; i < gmRows; ++i)
      for (int64_t j = 0; j < ld; ++j) {
        const bool inside = i >= 2 && i < 2 + R && j >= 3 && j < 3 + C;
        if (inside)
          (*out)(i - 2, j - 3) = go[size_t(i * ld + j)];
        else
          ASSERT_EQ(toDouble(go[size_t(i * ld + j)]), toDouble(outside))
              << what << ": written outside the window at " << i << ", " << j;
      }
  };
  bt::binary<bt::op::Add>(wo, va, vb);
  fromWindow("add views into a window");
  ref([](double x, double y) { return x + y; }, "add views into a window");
  bt::binary<bt::op::Sub>(*out, va, *b);
  ref([](double x, double y) { return x - y; }, "sub of a view");
  bt::binary<bt::op::Mul>(wo, *a, vb);
  fromWindow("mul into a window");
  ref([](double x, double y) { return x * y; }, "mul into a window");
  bt::binary<bt::op::Max>(*out, *a, vb);
  ref([](double x, double y) { return x > y ? x : y; }, "maximum of a view");
  bt::binary<bt::op::Min>(wo, va, *b);
  fromWindow("minimum into a window");
  ref([](double x, double y) { return x < y ? x : y; }, "minimum of a view");
  if (!std::is_integral<T>::value) {
    bt::binary<bt::op::Div>(wo, va, vb);
    fromWindow("div views into a window");
    ref([](double x, double y) { return x / y; }, "div views into a window");
  }
}

/// The broadcast forms of every binary op against a naive reference: an Rx1
/// rhs (b[i] for all of row i) when C > 1, a 1xC rhs (b[j] for all of
/// column j) when R > 1.
template <typename T, int64_t R, int64_t C> void checkBroadcast() {
  std::mt19937 rng(R * 977 + C);
  auto a = randomTile<T, R, C>(rng);
  auto rows = randomTile<T, R, 1>(rng, 0.5, 4);
  auto cols = randomTile<T, 1, C>(rng, 0.5, 4);
  auto out = std::make_unique<Tile<T, R, C>>();
  // rhs(i, j) is the element of b that applies to a(i, j).
  auto ref = [&](auto rhs, auto op, const char *what) {
    for (int64_t i = 0; i < R; ++i)
      for (int64_t j = 0; j < C; ++j) {
        const double x = toDouble((*a)(i, j)), y = rhs(i, j);
        expectNear<T>(toDouble(fromDouble<T>(op(x, y))), (*out)(i, j), 0, what,
                      i * C + j);
      }
  };
  auto add = [](double x, double y) { return x + y; };
  auto sub = [](double x, double y) { return x - y; };
  auto mul = [](double x, double y) { return x * y; };
  auto div = [](double x, double y) { return x / y; };
  auto max = [](double x, double y) { return x > y ? x : y; };
  auto min = [](double x, double y) { return x < y ? x : y; };
  const bool integral = std::is_integral<T>::value;
  if constexpr (C > 1) {
    auto row = [&](int64_t i, int64_t) { return toDouble(rows->data[i]); };
    bt::binary<bt::op::Add>(*out, *a, *rows);
    ref(row, add, "add row");
    bt::binary<bt::op::Sub>(*out, *a, *rows);
    ref(row, sub, "sub row");
    bt::binary<bt::op::Mul>(*out, *a, *rows);
    ref(row, mul, "mul row");
    bt::binary<bt::op::Max>(*out, *a, *rows);
    ref(row, max, "maximum row");
    bt::binary<bt::op::Min>(*out, *a, *rows);
    ref(row, min, "minimum row");
    if (!integral) {
      bt::binary<bt::op::Div>(*out, *a, *rows);
      ref(row, div, "div row");
    }
  }
  if constexpr (R > 1) {
    auto col = [&](int64_t, int64_t j) { return toDouble(cols->data[j]); };
    bt::binary<bt::op::Add>(*out, *a, *cols);
    ref(col, add, "add column");
    bt::binary<bt::op::Sub>(*out, *a, *cols);
    ref(col, sub, "sub column");
    bt::binary<bt::op::Mul>(*out, *a, *cols);
    ref(col, mul, "mul column");
    bt::binary<bt::op::Max>(*out, *a, *cols);
    ref(col, max, "maximum column");
    bt::binary<bt::op::Min>(*out, *a, *cols);
    ref(col, min, "minimum column");
    if (!integral) {
      bt::binary<bt::op::Div>(*out, *a, *cols);
      ref(col, div, "div column");
    }
    // In place, as generated code may write over the lhs.
    *out = *a;
    bt::binary<bt::op::Mul>(*out, *out, *cols);
    ref(col, mul, "mul column in place");
  }
}

template <typename T, int64_t R, int64_t C> void checkReduce() {
  std::mt19937 rng(R * 7 + C);
  auto a = randomTile<T, R, C>(rng);
  Tile<T, R, 1> sums, maxes;
  bt::row_reduce<bt::op::Add>(sums, *a);
  bt::row_reduce<bt::op::Max>(maxes, *a);
  for (int64_t r = 0; r < R; ++r) {
    double sum = 0, max = -1e300, scale = 0;
    for (int64_t c = 0; c < C; ++c) {
      const double x = toDouble((*a)(r, c));
      sum += x;
      scale += std::fabs(x);
      max = std::max(max, x);
    }
    expectNear<T>(sum, sums.data[r], scale, "row_sum", r);
    expectNear<T>(max, maxes.data[r], 0, "row_max", r);
  }
}

/// The left operand read in place from GM (`view`) and the right one
/// loaded into `Panels` give exactly the plain tiles' results `want`
/// (matmul) and `wantAcc` (matmul_acc on top of it): the same products
/// summed in the same order. The GM tensors are wider than the tiles and
/// the windows start off their origin, so leading dimensions and offsets
/// count.
/// A PanelCache hands out one slot per K x N window at multiples of K rows
/// and N columns: the first load packs it there, later loads read it in
/// place; a window being packed elsewhere, an unaligned window and a cache
/// without memory load the block's own panels. Every form multiplies as the
/// plain tile `b` (`want`).
template <typename TA, typename TC, int64_t M, int64_t K, int64_t N>
void checkPanelCache(const Tile<TA, M, K, Space::Left> &a,
                     const Tile<TA, K, N, Space::Right> &b,
                     const Tile<TC, M, N, Space::Acc> &want) {
  // b is the window at (K, N) of a 2K x (3N + N / 2) tensor: slot 1 * 2 + 1
  // of 2 x 3, the slots running down each column strip (the last N / 2
  // columns make none).
  const int64_t rows = 2 * K, cols = 3 * N + N / 2;
  // One row more than the tensor, as GM may hold: GCC's -O3 bounds analysis
  // cannot see that the window below the last is never packed, and would
  // flag it for K = 1.
  std::vector<TA> gm(size_t((rows + 1) * cols), fromDouble<TA>(5));
  for (int64_t k = 0; k < K; ++k)
    for (int64_t j = 0; j < N; ++j)
      gm[size_t((K + k) * cols + N + j)] = b(k, j);
  using Cache = bt::PanelCache<TA, K, N>;
  ASSERT_EQ(Cache(rows, cols).tiles(), 6);
  ASSERT_EQ(Cache(K - 1, cols).bytes(), 0) << "no whole window, no memory";
  Cache cache(rows, cols);
  std::vector<std::byte> memory(size_t(cache.bytes()) + 64);
  auto *base = reinterpret_cast<std::byte *>(
      (reinterpret_cast<uintptr_t>(memory.data()) + 63) / 64 * 64);
  std::memset(base, 0, size_t(cache.header_bytes()));
  cache.attach(base);
  const auto *slot3 = reinterpret_cast<const typename Cache::stored_type *>(
                          base + cache.header_bytes()) +
                      3 * K * N;
  auto own = std::make_unique<bt::Panels<TA, K, N>>();
  auto c = std::make_unique<Tile<TC, M, N, Space::Acc>>();
  auto expectWant = [&](const auto &panels, const char *form) {
    bt::matmul(*c, a, panels);
    for (int64_t i = 0; i < M * N; ++i)
      ASSERT_EQ(toDouble(c->data[i]), toDouble(want.data[i]))
          << form << " " << M << "x" << K << "x" << N << " at " << i;
  };
  // Another block is packing the window above b's (slot 2): this one packs
  // the window below it, b's, into its slot, and as the window it wants is
  // still being packed, its own copy of that.
  auto *state2 = reinterpret_cast<uint32_t *>(base) + 2;
  auto *state3 = reinterpret_cast<uint32_t *>(base) + 3;
  *state2 = 1;
  auto above = cache.load(*own, gm.data(), cols, 0, N);
  ASSERT_EQ(above.data, own->data) << "a window being packed elsewhere";
  ASSERT_EQ(*state3, 2u) << "the window below packed meanwhile";
  expectWant(bt::PanelsRef<TA, K, N>{slot3}, "the window below, packed ahead");
  *state2 = 2; // as if packed: now it is read in place
  ASSERT_EQ(cache.load(*own, gm.data(), cols, 0, N).data, slot3 - K * N);
  // The same when the window below is taken: its own copy, nothing else.
  *state2 = 1;
  *state3 = 1;
  above = cache.load(*own, gm.data(), cols, 0, N);
  ASSERT_EQ(above.data, own->data);
  ASSERT_EQ(*state3, 1u) << "a window another block packs is left to it";
  // Another block is packing the window: this one packs its own (there is
  // no window below b's).
  auto ref = cache.load(*own, gm.data(), cols, K, N);
  ASSERT_EQ(ref.data, own->data) << "a window being packed elsewhere";
  expectWant(ref, "own panels while another block packs");
  *state3 = 0;
  // The first load packs the slot, the next reads it.
  ref = cache.load(*own, gm.data(), cols, K, N);
  ASSERT_EQ(ref.data, slot3) << "the first load of a window";
  ASSERT_EQ(*state3, 2u) << "the packed slot is marked ready";
  expectWant(ref, "panels packed into the cache");
  std::vector<TA> changed(gm.size(), fromDouble<TA>(3));
  ref = cache.load(*own, changed.data(), cols, K, N);
  ASSERT_EQ(ref.data, slot3) << "a ready slot is read, not packed again";
  expectWant(ref, "panels read from the cache");
  // A window off the slots' grid (when columns can be), and a cache without
  // memory.
  if (N > 1) {
    ref = cache.load(*own, gm.data(), cols, K, N + 1);
    ASSERT_EQ(ref.data, own->data) << "an unaligned window";
  }
  Cache detached(rows, cols);
  detached.attach(nullptr);
  ref = detached.load(*own, gm.data(), cols, K, N);
  ASSERT_EQ(ref.data, own->data) << "a cache without memory";
  expectWant(ref, "own panels of a cache without memory");
}

template <typename TA, typename TC, int64_t M, int64_t K, int64_t N>
void checkMatmulOperandForms(const Tile<TA, M, K, Space::Left> &a,
                             const Tile<TA, K, N, Space::Right> &b,
                             const Tile<TC, M, N, Space::Acc> &want,
                             const Tile<TC, M, N, Space::Acc> &wantAcc) {
  const int64_t lda = K + 3, ldb = N + 5, row = 2, col = 1;
  std::vector<TA> gmA(size_t((M + row) * lda), fromDouble<TA>(7)),
      gmB(size_t((K + row) * ldb), fromDouble<TA>(7));
  for (int64_t i = 0; i < M; ++i)
    for (int64_t k = 0; k < K; ++k)
      gmA[size_t((row + i) * lda + col + k)] = a(i, k);
  for (int64_t k = 0; k < K; ++k)
    for (int64_t j = 0; j < N; ++j)
      gmB[size_t((row + k) * ldb + col + j)] = b(k, j);
  const auto view = bt::view<M, K>(gmA.data(), lda, row, col);
  auto panels = std::make_unique<bt::Panels<TA, K, N>>();
  bt::load(*panels, gmB.data(), ldb, row, col);
  for (int64_t k = 0; k < K; ++k)
    for (int64_t j = 0; j < N; ++j)
      ASSERT_EQ(double((*panels)(k, j)), toDouble(b(k, j)))
          << "panels " << K << "x" << N << " at " << k << "," << j;
  auto expectSame = [&](const Tile<TC, M, N, Space::Acc> &got,
                        const Tile<TC, M, N, Space::Acc> &ref,
                        const char *form) {
    for (int64_t i = 0; i < M * N; ++i)
      ASSERT_EQ(toDouble(got.data[i]), toDouble(ref.data[i]))
          << form << " " << M << "x" << K << "x" << N << " at " << i;
  };
  auto c = std::make_unique<Tile<TC, M, N, Space::Acc>>();
  bt::matmul(*c, view, b);
  expectSame(*c, want, "matmul(view, tile)");
  bt::matmul_acc(*c, view, b);
  expectSame(*c, wantAcc, "matmul_acc(view, tile)");
  bt::matmul(*c, a, *panels);
  expectSame(*c, want, "matmul(tile, panels)");
  bt::matmul_acc(*c, a, *panels);
  expectSame(*c, wantAcc, "matmul_acc(tile, panels)");
  bt::matmul(*c, view, *panels);
  expectSame(*c, want, "matmul(view, panels)");
  bt::matmul_acc(*c, view, *panels);
  expectSame(*c, wantAcc, "matmul_acc(view, panels)");
  checkPanelCache<TA, TC, M, K, N>(a, b, want);
  // b given transposed (N x K).
  auto bT = std::make_unique<Tile<TA, N, K, Space::Right>>();
  for (int64_t k = 0; k < K; ++k)
    for (int64_t j = 0; j < N; ++j)
      (*bT)(j, k) = b(k, j);
  bt::matmul_transposed(*c, a, *bT);
  expectSame(*c, want, "matmul_transposed(tile, tile)");
  bt::matmul_acc_transposed(*c, view, *bT);
  expectSame(*c, wantAcc, "matmul_acc_transposed(view, tile)");
}

template <typename TA, typename TC, int64_t M, int64_t K, int64_t N>
void checkMatmul() {
  std::mt19937 rng(M * 10007 + K * 101 + N);
  auto a = randomTile<TA, M, K, Space::Left>(rng, -1, 1);
  auto b = randomTile<TA, K, N, Space::Right>(rng, -1, 1);
  auto c = std::make_unique<Tile<TC, M, N, Space::Acc>>();
  // matmul overwrites c: whatever it held must not leak into the result.
  bt::full(*c, fromDouble<TC>(std::is_integral<TC>::value
                                  ? 12345.0
                                  : std::numeric_limits<double>::quiet_NaN()));
  bt::matmul(*c, *a, *b);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double want = 0, scale = 0;
      for (int64_t k = 0; k < K; ++k) {
        const double p = toDouble((*a)(i, k)) * toDouble((*b)(k, j));
        want += p;
        scale += std::fabs(p);
      }
      // Float accumulation over K terms.
      const double tolerance =
          (1e-6 * double(K) + 2 * eps<TC>()) * (scale + 1e-3);
      ASSERT_NEAR(toDouble((*c)(i, j)), want, tolerance)
          << "matmul " << M << "x" << K << "x" << N << " at " << i << "," << j;
    }
  // matmul_acc adds on top.
  auto twice = std::make_unique<Tile<TC, M, N, Space::Acc>>(*c);
  bt::matmul_acc(*twice, *a, *b);
  for (int64_t i = 0; i < M * N; ++i)
    ASSERT_NEAR(toDouble(twice->data[i]), 2 * toDouble(c->data[i]),
                4 * eps<TC>() * (std::fabs(toDouble(c->data[i])) + 1) + 1e-5);
  checkMatmulOperandForms<TA, TC, M, K, N>(*a, *b, *c, *twice);
}

TEST(TileTypes, HalfRoundTripsAndRoundsToNearestEven) {
  // Every finite half converts to float and back unchanged.
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    half h = half::fromBits(uint16_t(bits));
    float f = h;
    if (std::isnan(f))
      continue;
    ASSERT_EQ(half(f).bits, bits) << std::hex << bits;
  }
  EXPECT_EQ(half(1.0f).bits, 0x3c00);
  EXPECT_EQ(half(-2.0f).bits, 0xc000);
  EXPECT_EQ(half(65504.0f).bits, 0x7bff);
  EXPECT_EQ(half(1e6f).bits, 0x7c00);          // overflow -> inf
  EXPECT_EQ(half(5.9604645e-8f).bits, 0x0001); // smallest subnormal
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even (1).
  EXPECT_EQ(half(1.0f + 1.0f / 2048).bits, 0x3c00);
  EXPECT_EQ(half(1.0f + 3.0f / 2048).bits, 0x3c02);
  EXPECT_TRUE(std::isnan(float(half(std::numeric_limits<float>::quiet_NaN()))));
}

TEST(TileTypes, Bfloat16RoundsToNearestEven) {
  EXPECT_EQ(bfloat16(1.0f).bits, 0x3f80);
  EXPECT_EQ(float(bfloat16(3.0f)), 3.0f);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even (1).
  EXPECT_EQ(bfloat16(1.0f + 1.0f / 256).bits, 0x3f80);
  EXPECT_EQ(bfloat16(1.0f + 3.0f / 256).bits, 0x3f82);
  EXPECT_TRUE(
      std::isnan(float(bfloat16(std::numeric_limits<float>::quiet_NaN()))));
  for (uint32_t bits = 0; bits < 0x10000; bits += 3) {
    bfloat16 b = bfloat16::fromBits(uint16_t(bits));
    if (std::isnan(float(b)))
      continue;
    ASSERT_EQ(bfloat16(float(b)).bits, bits);
  }
}

#define BP_SHAPES(CHECK, T)                                                    \
  CHECK<T, 1, 1>();                                                            \
  CHECK<T, 1, 7>();                                                            \
  CHECK<T, 3, 5>();                                                            \
  CHECK<T, 8, 8>();                                                            \
  CHECK<T, 16, 33>();                                                          \
  CHECK<T, 32, 64>();                                                          \
  CHECK<T, 64, 128>();                                                         \
  CHECK<T, 128, 96>()

TEST(Tile, ElementwiseFloat) { BP_SHAPES(checkElementwise, float); }
TEST(Tile, ElementwiseHalf) { BP_SHAPES(checkElementwise, half); }
TEST(Tile, ElementwiseBf16) { BP_SHAPES(checkElementwise, bfloat16); }
TEST(Tile, ElementwiseInt32) { BP_SHAPES(checkElementwise, int32_t); }
TEST(Tile, BroadcastFloat) {
  BP_SHAPES(checkBroadcast, float);
  checkBroadcast<float, 5, 1>();
}
TEST(Tile, BroadcastHalf) {
  BP_SHAPES(checkBroadcast, half);
  checkBroadcast<half, 5, 1>();
}
TEST(Tile, BroadcastBf16) {
  BP_SHAPES(checkBroadcast, bfloat16);
  checkBroadcast<bfloat16, 5, 1>();
}
TEST(Tile, BroadcastInt32) {
  BP_SHAPES(checkBroadcast, int32_t);
  checkBroadcast<int32_t, 5, 1>();
}
TEST(Tile, ReduceFloat) { BP_SHAPES(checkReduce, float); }
TEST(Tile, ReduceHalf) { BP_SHAPES(checkReduce, half); }
TEST(Tile, ReduceBf16) { BP_SHAPES(checkReduce, bfloat16); }
TEST(Tile, ReduceInt32) { BP_SHAPES(checkReduce, int32_t); }

TEST(Tile, MatmulFloat) {
  checkMatmul<float, float, 1, 1, 1>();
  checkMatmul<float, float, 3, 5, 7>();
  checkMatmul<float, float, 16, 16, 16>();
  checkMatmul<float, float, 32, 65, 17>(); // K crosses a block boundary
  checkMatmul<float, float, 64, 128, 64>();
  checkMatmul<float, float, 64, 64, 128>(); // the flagship kernel's tiles
  // The largest the cpu-sim spec allows: left 64 KiB, right 64 KiB, acc
  // 128 KiB of fp32.
  checkMatmul<float, float, 128, 128, 128>();
}

TEST(Tile, MatmulHalfAndBf16AccumulateInFloat) {
  checkMatmul<half, float, 16, 16, 16>();
  checkMatmul<half, float, 33, 70, 9>();
  checkMatmul<half, half, 8, 32, 8>();
  checkMatmul<half, float, 128, 256, 64>(); // 64 KiB fp16 left operand
  checkMatmul<bfloat16, float, 16, 48, 32>();
  checkMatmul<bfloat16, bfloat16, 4, 8, 12>();
}

// Shapes around the register blocks of the SIMD path (8 x 32 with AVX-512,
// 6 x 16 with AVX2): leftover rows, leftover whole vectors, a masked last
// vector, fewer columns than one vector, and K over the K block (128).
TEST(Tile, MatmulFloatOddShapes) {
  checkMatmul<float, float, 2, 3, 15>();
  checkMatmul<float, float, 5, 1, 16>();
  checkMatmul<float, float, 6, 4, 8>();
  checkMatmul<float, float, 7, 9, 31>();
  checkMatmul<float, float, 8, 8, 32>();
  checkMatmul<float, float, 9, 17, 33>();
  checkMatmul<float, float, 13, 11, 48>();
  checkMatmul<float, float, 15, 20, 50>();
  checkMatmul<float, float, 17, 129, 65>();
  checkMatmul<float, float, 23, 300, 47>();
  checkMatmul<float, float, 64, 1, 128>();
  checkMatmul<float, float, 1, 64, 200>();
}

TEST(Tile, MatmulHalfAndBf16OddShapes) {
  checkMatmul<half, float, 7, 33, 41>();
  checkMatmul<half, half, 9, 130, 17>();
  checkMatmul<bfloat16, float, 13, 5, 50>();
  checkMatmul<bfloat16, bfloat16, 10, 64, 36>();
}

/// matmul_acc over K blocks, as generated kernels chain it, equals one
/// matmul over the whole K.
template <typename T, int64_t M, int64_t K, int64_t N, int64_t Parts>
void checkMatmulAccChain() {
  static_assert(K % Parts == 0, "K splits into Parts");
  constexpr int64_t KP = K / Parts;
  std::mt19937 rng(M * 31 + K * 7 + N);
  auto a = randomTile<T, M, K, Space::Left>(rng, -1, 1);
  auto b = randomTile<T, K, N, Space::Right>(rng, -1, 1);
  auto whole = std::make_unique<Tile<float, M, N, Space::Acc>>();
  bt::matmul(*whole, *a, *b);
  auto chained = std::make_unique<Tile<float, M, N, Space::Acc>>();
  auto ap = std::make_unique<Tile<T, M, KP, Space::Left>>();
  auto bp = std::make_unique<Tile<T, KP, N, Space::Right>>();
  for (int64_t p = 0; p < Parts; ++p) {
    for (int64_t i = 0; i < M; ++i)
      for (int64_t k = 0; k < KP; ++k)
        (*ap)(i, k) = (*a)(i, p * KP + k);
    for (int64_t k = 0; k < KP; ++k)
      for (int64_t j = 0; j < N; ++j)
        (*bp)(k, j) = (*b)(p * KP + k, j);
    if (p == 0)
      bt::matmul(*chained, *ap, *bp);
    else
      bt::matmul_acc(*chained, *ap, *bp);
  }
  for (int64_t i = 0; i < M * N; ++i)
    ASSERT_NEAR(chained->data[i], whole->data[i],
                1e-5 * (std::fabs(whole->data[i]) + double(K)))
        << "chained matmul_acc " << M << "x" << K << "x" << N << " at " << i;
}

TEST(Tile, MatmulAccChainsOverK) {
  checkMatmulAccChain<float, 64, 256, 128, 4>();
  checkMatmulAccChain<float, 19, 60, 37, 3>();
  checkMatmulAccChain<half, 11, 48, 24, 2>();
  checkMatmulAccChain<bfloat16, 8, 32, 40, 4>();
}

TEST(Tile, MatmulInt32) { checkMatmul<int32_t, int32_t, 9, 13, 11>(); }

TEST(Tile, LoadStoreWindowsOfAGmTensor) {
  const int64_t rows = 40, cols = 50;
  std::vector<float> gm(rows * cols), back(rows * cols, -1);
  for (int64_t i = 0; i < rows * cols; ++i)
    gm[i] = float(i);
  Tile<float, 8, 16> tile;
  bt::load(tile, gm.data(), cols, 16, 24);
  for (int64_t r = 0; r < 8; ++r)
    for (int64_t c = 0; c < 16; ++c)
      ASSERT_EQ(tile(r, c), gm[(16 + r) * cols + 24 + c]);
  bt::store(back.data(), cols, 16, 24, tile);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      const bool inside = r >= 16 && r < 24 && c >= 24 && c < 40;
      ASSERT_EQ(back[r * cols + c], inside ? gm[r * cols + c] : -1.0f);
    }

  // A view (a popped pipe slot read in place) stores as the tile would.
  std::vector<float> fromView(rows * cols, -1);
  bt::store(fromView.data(), cols, 16, 24,
            bt::view<8, 16>(gm.data(), cols, 16, 24));
  ASSERT_EQ(fromView, back);

  // Edge tile: 3 valid rows, 5 valid cols, padded with 0.
  Tile<float, 8, 16> edge;
  bt::load_partial(edge, gm.data(), cols, 37, 45, 3, 5, 0.0f);
  for (int64_t r = 0; r < 8; ++r)
    for (int64_t c = 0; c < 16; ++c)
      ASSERT_EQ(edge(r, c),
                r < 3 && c < 5 ? gm[(37 + r) * cols + 45 + c] : 0.0f);
  std::vector<float> out(rows * cols, -1);
  bt::store_partial(out.data(), cols, 37, 45, edge, 3, 5);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      const bool inside = r >= 37 && c >= 45;
      ASSERT_EQ(out[r * cols + c], inside ? gm[r * cols + c] : -1.0f);
    }
}

TEST(Tile, MoveFullAndCast) {
  Tile<float, 4, 8, Space::Mat> mat;
  bt::full(mat, 2.5f);
  Tile<float, 4, 8, Space::Left> left;
  bt::move(left, mat);
  for (float v : left.data)
    ASSERT_EQ(v, 2.5f);

  Tile<float, 4, 8> f;
  for (int i = 0; i < 32; ++i)
    f.data[i] = float(i) * 0.75f - 7.3f;
  Tile<half, 4, 8> h;
  Tile<bfloat16, 4, 8> b;
  Tile<int32_t, 4, 8> n;
  bt::cast(h, f);
  bt::cast(b, f);
  bt::cast(n, f);
  Tile<float, 4, 8> back;
  bt::cast(back, h);
  for (int i = 0; i < 32; ++i) {
    ASSERT_EQ(float(h.data[i]), float(half(f.data[i])));
    ASSERT_EQ(float(b.data[i]), float(bfloat16(f.data[i])));
    ASSERT_EQ(n.data[i], int32_t(f.data[i]));
    ASSERT_EQ(back.data[i], float(h.data[i]));
  }
  static_assert(Tile<half, 128, 256>::bytes == 64 * 1024, "tile bytes");
}

/// tile::abs against std::abs, element by element and bit for bit: the sign
/// of -0 and of NaN is cleared too, in place as well.
template <typename T> void checkAbs(std::vector<double> values) {
  Tile<T, 4, 8> a, out;
  ASSERT_LE(values.size(), size_t(32));
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> dist(-100, 100);
  while (values.size() < 32)
    values.push_back(std::is_integral<T>::value ? std::round(dist(rng))
                                                : dist(rng));
  for (int i = 0; i < 32; ++i)
    a.data[i] = fromDouble<T>(values[i]);
  bt::unary<bt::op::Abs>(out, a);
  for (int i = 0; i < 32; ++i) {
    const T want = T(std::abs(bt::compute_t<T>(a.data[i])));
    ASSERT_EQ(std::memcmp(&out.data[i], &want, sizeof(T)), 0)
        << "abs(" << toDouble(a.data[i]) << ") gave " << toDouble(out.data[i])
        << " at " << i;
  }
  bt::unary<bt::op::Abs>(a, a);
  ASSERT_EQ(std::memcmp(a.data, out.data, sizeof(a.data)), 0) << "in place";
}

TEST(Tile, AbsMatchesStdAbs) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> special = {0.0, -0.0, 1.5,  -1.5,   -inf,
                                       inf, nan,  -nan, -1e-30, 3.0};
  checkAbs<float>(special);
  checkAbs<half>(special);
  checkAbs<bfloat16>(special);
  checkAbs<int32_t>({0, -1, 1, -2147483647, 2147483647});
  checkAbs<int64_t>({0, -1, 1, -9007199254740992.0});
}

} // namespace

#ifdef BP_TILE_TEST_ISA
// The variants built for an instruction set extension skip every test on a
// CPU without it.
namespace {
class IsaEnvironment : public ::testing::Environment {
public:
  void SetUp() override {
#if defined(__x86_64__) || defined(__i386__)
    if (std::string(BP_TILE_TEST_ISA) == "avx2" &&
        !(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")))
      GTEST_SKIP() << "this CPU has no AVX2 + FMA";
#endif
  }
};
[[maybe_unused]] ::testing::Environment *const isaEnvironment =
    ::testing::AddGlobalTestEnvironment(new IsaEnvironment);
} // namespace
#endif

TEST(Tile, DivisibleFindsWhatWouldTrap) {
  bt::Tile<int32_t, 2, 3, bt::Space::Vec> a, b;
  bt::Tile<int32_t, 2, 1, bt::Space::Vec> rows;
  for (int i = 0; i < 6; ++i) {
    a.data[i] = 10 * (i + 1);
    b.data[i] = i + 1;
  }
  rows.data[0] = 2;
  rows.data[1] = 5;
  EXPECT_TRUE(bt::operands_valid<bt::op::Div>(a, b));
  EXPECT_TRUE(bt::operands_valid<bt::op::Div>(a, rows));
  EXPECT_TRUE(bt::operands_valid<bt::op::Div>(a, 7));
  EXPECT_FALSE(bt::operands_valid<bt::op::Div>(a, 0));
  b.data[4] = 0; // one zero divisor
  EXPECT_FALSE(bt::operands_valid<bt::op::Div>(a, b));
  rows.data[1] = 0;
  EXPECT_FALSE(bt::operands_valid<bt::op::Div>(a, rows));
  bt::Tile<int32_t, 1, 3, bt::Space::Vec> cols;
  cols.data[0] = 1;
  cols.data[1] = 2;
  cols.data[2] = 5;
  EXPECT_TRUE(bt::operands_valid<bt::op::Div>(a, cols));
  cols.data[2] = 0;
  EXPECT_FALSE(bt::operands_valid<bt::op::Div>(a, cols));
  cols.data[2] = -1; // a divisor of -1 is fine until the lowest value
  // The lowest value by -1 overflows; by -2 it does not.
  EXPECT_TRUE(bt::operands_valid<bt::op::Div>(a, cols));
  a.data[0] = std::numeric_limits<int32_t>::lowest();
  EXPECT_FALSE(bt::operands_valid<bt::op::Div>(a, -1));
  EXPECT_TRUE(bt::operands_valid<bt::op::Div>(a, -2));
  a.data[2] = std::numeric_limits<int32_t>::lowest(); // column 2, by -1
  EXPECT_FALSE(bt::operands_valid<bt::op::Div>(a, cols));
  // Floating point never traps: x / 0 is inf or NaN.
  bt::Tile<float, 1, 2, bt::Space::Vec> f;
  f.data[0] = 1.0f;
  f.data[1] = 0.0f;
  EXPECT_TRUE(bt::operands_valid<bt::op::Div>(f, 0.0f));
}

TEST(Tile, MaximumMinimumReluAndRowMaxPropagateNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  bt::Tile<float, 1, 3, bt::Space::Vec> a, b, mx, mn, r;
  bt::Tile<float, 1, 1, bt::Space::Vec> rm;
  float av[3] = {nan, 1.0f, -2.0f}, bv[3] = {1.0f, nan, 3.0f};
  std::memcpy(a.data, av, sizeof av);
  std::memcpy(b.data, bv, sizeof bv);
  bt::binary<bt::op::Max>(mx, a, b);
  bt::binary<bt::op::Min>(mn, a, b);
  bt::unary<bt::op::Relu>(r, a);
  // NaN on either side gives NaN; otherwise the usual answer.
  EXPECT_TRUE(std::isnan(mx.data[0]) && std::isnan(mx.data[1]));
  EXPECT_TRUE(std::isnan(mn.data[0]) && std::isnan(mn.data[1]));
  EXPECT_EQ(mx.data[2], 3.0f);
  EXPECT_EQ(mn.data[2], -2.0f);
  EXPECT_TRUE(std::isnan(r.data[0]));
  EXPECT_EQ(r.data[2], 0.0f);
  bt::row_reduce<bt::op::Max>(rm, b); // the NaN is not in column 0
  EXPECT_TRUE(std::isnan(rm.data[0]));
}

// The host's exp is its own vectorizable arithmetic: within 2 ulp of
// libm's over a sweep of every float exponent, with libm's answers at the
// edges (NaN, +-inf, overflow, the subnormal range, underflow to zero).
TEST(Tile, ExpIsWithinTwoUlpOfLibm) {
  auto ulps = [](float a, float b) {
    int32_t x, y;
    std::memcpy(&x, &a, sizeof x);
    std::memcpy(&y, &b, sizeof y);
    return std::abs(int64_t(x) - int64_t(y));
  };
  for (uint32_t u = 0; u < 0xFFFFFFFFu - 40503u; u += 40503u) {
    float x;
    std::memcpy(&x, &u, sizeof x);
    const float want = std::exp(x);
    const float got = bt::op::Exp{}(x);
    if (std::isnan(want))
      EXPECT_TRUE(std::isnan(got)) << x;
    else
      EXPECT_LE(ulps(got, want), 2) << x << ": " << got << " vs " << want;
  }
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(std::isnan(bt::op::Exp{}(std::nanf(""))));
  EXPECT_EQ(bt::op::Exp{}(inf), inf);
  EXPECT_EQ(bt::op::Exp{}(-inf), 0.0f);
  EXPECT_EQ(bt::op::Exp{}(89.0f), inf);
  EXPECT_EQ(bt::op::Exp{}(-104.0f), 0.0f);
  EXPECT_LE(ulps(bt::op::Exp{}(-100.0f), std::exp(-100.0f)), 2);
  EXPECT_EQ(bt::op::Exp{}(0.0f), 1.0f);
}

// A long row is folded in vector lanes: a NaN in a lane or in the tail
// still makes the row's maximum NaN, and an integer sum is exact.
TEST(Tile, LaneFoldsKeepNaNAndIntegerSums) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  bt::Tile<float, 2, 40, bt::Space::Vec> a;
  bt::Tile<float, 2, 1, bt::Space::Vec> mx;
  for (int64_t i = 0; i < 80; ++i)
    a.data[i] = float(i % 17);
  a.data[20] = nan;      // row 0, a lane
  a.data[40 + 37] = nan; // row 1, the tail
  bt::row_reduce<bt::op::Max>(mx, a);
  EXPECT_TRUE(std::isnan(mx.data[0]) && std::isnan(mx.data[1]));
  bt::Tile<int32_t, 1, 100, bt::Space::Vec> n;
  bt::Tile<int32_t, 1, 1, bt::Space::Vec> sum;
  int64_t want = 0;
  for (int32_t i = 0; i < 100; ++i) {
    n.data[i] = i * 7919 - 300000;
    want += n.data[i];
  }
  bt::row_reduce<bt::op::Add>(sum, n);
  EXPECT_EQ(sum.data[0], int32_t(want));
}

// copy_bytes takes its own path where the destination is 1..63 bytes past
// the source modulo 4 KiB; every distance around that range and lengths
// that end mid-chunk copy exactly, without touching a byte past the end.
TEST(CopyBytes, EveryDistanceAroundThe4KiBAliasingRange) {
  std::vector<unsigned char> source(3 * 4096 + 200);
  for (size_t i = 0; i < source.size(); ++i)
    source[i] = static_cast<unsigned char>(i * 131 + 7);
  alignas(4096) static unsigned char target[6 * 4096];
  for (size_t bytes :
       {size_t(100), size_t(2048), size_t(4096 + 17), size_t(2 * 4096 + 63)}) {
    for (int64_t distance = -2; distance <= 70; ++distance) {
      // Both within the buffers; the target 2 KiB past a page boundary.
      const unsigned char *src = source.data() + 64;
      const uintptr_t srcLow = reinterpret_cast<uintptr_t>(src) & 4095;
      unsigned char *dst = target + 4096 + ((srcLow + 4096 + distance) & 4095);
      std::memset(target, 0xEE, sizeof target);
      bt::copy_bytes(dst, src, bytes);
      ASSERT_EQ(std::memcmp(dst, src, bytes), 0)
          << bytes << " bytes at distance " << distance;
      ASSERT_EQ(dst[bytes], 0xEE) << "wrote past the end";
      ASSERT_EQ(dst[-1], 0xEE) << "wrote before the start";
    }
  }
}
