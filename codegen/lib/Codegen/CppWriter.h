//===- CppWriter.h - Indented C++ text --------------------------*- C++ -*-===//

#ifndef BLOCKPIPE_CODEGEN_CPPWRITER_H
#define BLOCKPIPE_CODEGEN_CPPWRITER_H

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"

#include <string>

namespace blockpipe::codegen {

/// Accumulates lines of C++ at a two-space indentation level (LLVM style).
/// A statement longer than kColumnLimit is wrapped the way clang-format
/// would: at the commas of its first argument list (else the `+` of a
/// concatenation, else after `=`), continuation lines aligned after the
/// parenthesis. Breaks fall only between tokens, never in a literal or a
/// comment, so wrapping never changes what the code means.
class CppWriter {
public:
  static constexpr size_t kColumnLimit = 100;

  /// Writes one line at the current indentation (an empty line stays empty).
  CppWriter &line(llvm::StringRef text = "") {
    if (text.empty())
      text_ += '\n';
    else
      wrap(text, 2 * indent_);
    return *this;
  }
  void indent() { ++indent_; }
  void dedent() { --indent_; }
  /// Writes `header {`, and indents until the matching close().
  void open(llvm::StringRef header) {
    line((llvm::Twine(header) + " {").str());
    indent();
  }
  void close(llvm::StringRef trailer = "}") {
    dedent();
    line(trailer);
  }
  std::string &str() { return text_; }
  const std::string &str() const { return text_; }

private:
  /// Appends `text` at `column`, wrapped to kColumnLimit where it can be.
  void wrap(llvm::StringRef text, size_t column);

  std::string text_;
  unsigned indent_ = 0;
};

} // namespace blockpipe::codegen

#endif // BLOCKPIPE_CODEGEN_CPPWRITER_H
