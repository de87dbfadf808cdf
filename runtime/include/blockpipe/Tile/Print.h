//===- Print.h - The text of pl.print ---------------------------*- C++ -*-===//
//
// print_line("f.py:12", texts, i, t), texts {"row ", " sum ", ""}, is
// "f.py:12: row 3 sum
// [[1, 2.5], [-inf, nan]]": the texts and the arguments in turn, integers in
// decimal, floats as "%.8g" would (f16 and bf16 through float; doubles
// with 17 digits), a tile as nested brackets, row-major; a tile of more
// than 1000 elements shows the first and last 3 entries of each longer
// dimension around "...". The interpreter's pl.print writes the same.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_TILE_PRINT_H
#define BLOCKPIPE_TILE_PRINT_H

#include "blockpipe/Tile/Tile.h"

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <string>
#include <type_traits>

namespace blockpipe::tile {

namespace detail {
/// A scalar, as print_line writes it.
template <typename T> inline void appendScalar(std::string &out, T value) {
  char text[40];
  if constexpr (std::is_same<T, bool>::value)
    std::snprintf(text, sizeof text, "%s", value ? "1" : "0");
  else if constexpr (std::is_integral<T>::value && std::is_signed<T>::value)
    std::snprintf(text, sizeof text, "%" PRId64, int64_t(value));
  else if constexpr (std::is_integral<T>::value)
    std::snprintf(text, sizeof text, "%" PRIu64, uint64_t(value));
  else if constexpr (std::is_same<T, double>::value)
    std::snprintf(text, sizeof text, "%.17g", value);
  else
    std::snprintf(text, sizeof text, "%.8g", double(float(value)));
  out += text;
}

/// The entries of one dimension of `extent` a print shows: all, or the
/// first and last 3 around a gap (`summarize`).
inline bool shown(int64_t k, int64_t extent, bool summarize) {
  return !summarize || extent <= 6 || k < 3 || k >= extent - 3;
}

template <typename T, int64_t R, int64_t C, Space S>
inline void appendTile(std::string &out, const Tile<T, R, C, S> &tile) {
  const bool summarize = R * C > 1000;
  out += '[';
  for (int64_t r = 0; r < R; ++r) {
    if (!shown(r, R, summarize)) {
      if (r == 3)
        out += "..., ";
      continue;
    }
    out += '[';
    for (int64_t c = 0; c < C; ++c) {
      if (!shown(c, C, summarize)) {
        if (c == 3)
          out += "..., ";
        continue;
      }
      appendScalar(out, tile.data[r * C + c]);
      if (c + 1 < C)
        out += ", ";
    }
    out += ']';
    if (r + 1 < R)
      out += ", ";
  }
  out += ']';
}

inline void appendArgs(std::string &, const char *const *) {}
template <typename A, typename... Rest>
inline void appendArgs(std::string &out, const char *const *texts, const A &arg,
                       const Rest &...rest) {
  if constexpr (IsTile<A>::value)
    appendTile(out, arg);
  else
    appendScalar(out, arg);
  out += texts[0];
  appendArgs(out, texts + 1, rest...);
}
} // namespace detail

/// The line pl.print writes: "<where>: " then the texts and the arguments
/// in turn (one text more than arguments).
template <typename... Args>
inline std::string print_line(const char *where, const char *const *texts,
                              const Args &...args) {
  std::string out = where;
  if (*where)
    out += ": ";
  out += texts[0];
  detail::appendArgs(out, texts + 1, args...);
  return out;
}

} // namespace blockpipe::tile

#endif // BLOCKPIPE_TILE_PRINT_H
