//===- CppWriter.h - Indented C++ text --------------------------*- C++ -*-===//

#ifndef BLOCKPIPE_CODEGEN_CPPWRITER_H
#define BLOCKPIPE_CODEGEN_CPPWRITER_H

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"

#include <string>

namespace blockpipe::codegen {

/// Accumulates lines of C++ at a two-space indentation level (LLVM style).
class CppWriter {
public:
  /// Writes one line at the current indentation (an empty line stays empty).
  CppWriter &line(llvm::StringRef text = "") {
    if (!text.empty())
      text_.append(2 * indent_, ' ');
    text_.append(text.begin(), text.end());
    text_ += '\n';
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
  std::string text_;
  unsigned indent_ = 0;
};

} // namespace blockpipe::codegen

#endif // BLOCKPIPE_CODEGEN_CPPWRITER_H
