//===- Coverage.h - Which part of a tensor is left unwritten ----*- C++ -*-===//
//
// The one way blockpipe says which elements of an output were never
// written: the compiler's warning (bp-check-output-coverage) and the
// runtime's sanitizer report both use it, so the two read alike.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_TARGET_COVERAGE_H
#define BLOCKPIPE_TARGET_COVERAGE_H

#include <cstdint>
#include <string>
#include <vector>

namespace blockpipe {

/// "0:16, 48:64": the runs of `true` in `set` as half-open ranges, at most
/// four of them, then "and N more".
inline std::string describeRanges(const std::vector<bool> &set) {
  std::string text;
  int64_t shown = 0, total = 0;
  for (int64_t i = 0, n = int64_t(set.size()); i < n;) {
    if (!set[size_t(i)]) {
      ++i;
      continue;
    }
    int64_t j = i;
    while (j < n && set[size_t(j)])
      ++j;
    if (shown < 4) {
      text += (shown ? ", " : "") + std::to_string(i) + ":" + std::to_string(j);
      ++shown;
    }
    ++total;
    i = j;
  }
  if (total > shown)
    text += " and " + std::to_string(total - shown) + " more";
  return text;
}

/// What of a tensor of `shape` is unwritten, `written` holding one flag per
/// element in row-major order: "rows 64:80" (whole rows), "columns 12:16"
/// (whole columns), else "64 elements (in rows 16:32, columns 12:16)".
/// Rows are the leading dims flattened (a tensor of rank 1 is one row).
/// Empty when every element is written.
inline std::string describeUnwritten(const std::vector<bool> &written,
                                     const std::vector<int64_t> &shape) {
  int64_t cols = shape.empty() ? 1 : shape.back();
  int64_t rows = 1;
  for (size_t k = 0; k + 1 < shape.size(); ++k)
    rows *= shape[k];
  if (cols <= 0 || rows <= 0 || int64_t(written.size()) != rows * cols)
    return "";
  std::vector<bool> emptyRows(size_t(rows), true),
      emptyCols(size_t(cols), true);
  std::vector<bool> someRows(size_t(rows), false),
      someCols(size_t(cols), false);
  int64_t unwritten = 0;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      if (written[size_t(r * cols + c)]) {
        emptyRows[size_t(r)] = false;
        emptyCols[size_t(c)] = false;
      } else {
        someRows[size_t(r)] = true;
        someCols[size_t(c)] = true;
        ++unwritten;
      }
    }
  if (unwritten == 0)
    return "";
  int64_t rowsLeft = 0, colsLeft = 0;
  for (bool row : emptyRows)
    rowsLeft += row;
  for (bool col : emptyCols)
    colsLeft += col;
  const bool matrix = shape.size() == 2;
  const std::string rowWord = matrix ? "rows" : "rows (leading dims flattened)";
  if (rowsLeft * cols == unwritten)
    return rowWord + " " + describeRanges(emptyRows);
  if (colsLeft * rows == unwritten)
    return std::string(matrix ? "columns" : "last-dim columns") + " " +
           describeRanges(emptyCols);
  return std::to_string(unwritten) + " elements (in " + rowWord + " " +
         describeRanges(someRows) + ", columns " + describeRanges(someCols) +
         ")";
}

} // namespace blockpipe

#endif // BLOCKPIPE_TARGET_COVERAGE_H
