//===- Naming.h - C++ identifiers from user names ---------------*- C++ -*-===//
//
// Generated code keeps the user's names, but a name is user input: it may be
// a C++ keyword, a reserved identifier (`__x`, `_X`), start with a digit,
// hold non-ASCII letters, quotes or `;`. Every user string goes through
// sanitizeIdentifier() before it reaches C++ text, and through a NameScope so
// two different user names never become the same identifier.
//
// Identifiers starting with `bp_` / `BP_` are kept for the generated code's
// own helpers (and the runtime's macros), so a user name never shadows them.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_CODEGEN_NAMING_H
#define BLOCKPIPE_CODEGEN_NAMING_H

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSet.h"

#include <string>

namespace blockpipe::codegen {

/// A valid, non-reserved C++ identifier for `name`, the same for the same
/// input. Letters, digits and single underscores are kept; any other code
/// point becomes `u<hex>`; a keyword, a standard macro or a name the
/// generated code reserves gets a trailing `_`; a leading digit or
/// underscore gets a `v` prefix; runs of `_` collapse. Empty input gives "v".
std::string sanitizeIdentifier(llvm::StringRef name);
/// sanitizeIdentifier() for a name declared at global scope (the program's
/// namespace): also steers clear of the C and POSIX library functions there
/// (`div`, `time`, `pipe`, ...), which a namespace may not share a name with,
/// and from the generated files' namespace aliases `rt` and `tile`.
std::string sanitizeGlobalName(llvm::StringRef name);

/// The shared library's name (`lib<name>.so`) for project `project`: the
/// project itself, or `<project>_program` where `lib<project>.so` is the name
/// of a system or toolchain library (`c`, `m`, `pthread`, `stdc++`, ...), so
/// that linking or loading the program can never pick the wrong one.
std::string libraryName(llvm::StringRef project);

/// True when `name` is a C++ keyword or alternative token.
bool isCppKeyword(llvm::StringRef name);

/// Hands out unique identifiers within one C++ scope, in request order, so
/// the result is deterministic.
class NameScope {
public:
  /// Marks `identifier` as taken (e.g. names the generated code uses).
  void reserve(llvm::StringRef identifier);
  /// A fresh identifier for the user name `hint`: sanitized, then suffixed
  /// `_1`, `_2`, ... while taken.
  std::string unique(llvm::StringRef hint);
  bool isTaken(llvm::StringRef identifier) const {
    return taken_.contains(identifier);
  }

private:
  llvm::StringSet<> taken_;
  llvm::StringMap<unsigned> nextSuffix_;
};

/// `text` as the body of a C++ string literal (quotes not included): every
/// byte outside printable ASCII, and `"`, `\`, `?` (trigraphs), as escapes.
std::string escapeCppString(llvm::StringRef text);

/// `text` safe inside a `//` comment: one line, printable ASCII only, no
/// backslash and no `??` (a trigraph could be one).
std::string escapeCppComment(llvm::StringRef text);

} // namespace blockpipe::codegen

#endif // BLOCKPIPE_CODEGEN_NAMING_H
