//===- NamingTest.cpp - User names as C++ identifiers and text ------------===//
//
// Every user string reaches generated C++ through Naming.h: identifiers must
// be valid, non-reserved, never a keyword or one of the generated code's own
// names, the same for the same input, and unique within a scope; strings and
// comments must not be able to end early or inject code.
//
//===----------------------------------------------------------------------===//

#include "blockpipe/Codegen/Naming.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace {

using blockpipe::codegen::escapeCppComment;
using blockpipe::codegen::escapeCppString;
using blockpipe::codegen::isCppKeyword;
using blockpipe::codegen::NameScope;
using blockpipe::codegen::sanitizeGlobalName;
using blockpipe::codegen::sanitizeIdentifier;

/// A C++ identifier that no implementation reserves: [A-Za-z][A-Za-z0-9_]*
/// without `__`.
::testing::AssertionResult isPlainIdentifier(const std::string &id) {
  if (id.empty())
    return ::testing::AssertionFailure() << "empty identifier";
  auto alpha = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  };
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  if (!alpha(id.front()))
    return ::testing::AssertionFailure()
           << "'" << id << "' does not start with a letter";
  for (char c : id)
    if (!alpha(c) && !digit(c) && c != '_')
      return ::testing::AssertionFailure()
             << "'" << id << "' holds '" << c << "'";
  if (id.find("__") != std::string::npos)
    return ::testing::AssertionFailure() << "'" << id << "' holds '__'";
  return ::testing::AssertionSuccess();
}

/// User names of every kind the tests below single out.
const std::vector<std::string> &hostileNames() {
  static const std::vector<std::string> names = {
      "",      "x",         "int",    "class",     "and",
      "__x",   "_X",        "_",      "__",        "___",
      "1st",   "0",         "größe",  "日本",      "x\"; abort(); /*",
      "a;b",   "/*",        "*/",     "bp_ctx",    "BP_OK",
      "bp",    "BP",        "NULL",   "INT32_MAX", "std",
      "tile_", "a__b",      "a b",    "\xff\xfe",  "x\n#define y",
      "\\",    "?\?=",      "return", "u_bp_ctx",  "v1st",
      "NULL_", "INT32_MAX_"};
  return names;
}

TEST(SanitizeIdentifier, KeepsPlainNames) {
  EXPECT_EQ(sanitizeIdentifier("x"), "x");
  EXPECT_EQ(sanitizeIdentifier("row_max"), "row_max");
  EXPECT_EQ(sanitizeIdentifier("Tile2"), "Tile2");
  EXPECT_EQ(sanitizeIdentifier("bpx"), "bpx");
  EXPECT_EQ(sanitizeIdentifier("x_"), "x_");
}

TEST(SanitizeIdentifier, SuffixesKeywords) {
  EXPECT_TRUE(isCppKeyword("int"));
  EXPECT_FALSE(isCppKeyword("int_"));
  EXPECT_EQ(sanitizeIdentifier("int"), "int_");
  EXPECT_EQ(sanitizeIdentifier("class"), "class_");
  EXPECT_EQ(sanitizeIdentifier("return"), "return_");
  // Alternative tokens are keywords too: `and` cannot name a variable.
  EXPECT_EQ(sanitizeIdentifier("and"), "and_");
  EXPECT_EQ(sanitizeIdentifier("co_await"), "co_await_");
  EXPECT_EQ(sanitizeIdentifier("nullptr"), "nullptr_");
}

TEST(SanitizeIdentifier, SuffixesMacrosAndNamesOfIncludedHeaders) {
  EXPECT_EQ(sanitizeIdentifier("NULL"), "NULL_");
  EXPECT_EQ(sanitizeIdentifier("INT32_MAX"), "INT32_MAX_");
  EXPECT_EQ(sanitizeIdentifier("std"), "std_");
  EXPECT_EQ(sanitizeIdentifier("int64_t"), "int64_t_");
  EXPECT_EQ(sanitizeIdentifier("assert"), "assert_");
  // Already suffixed: another `_` would make a reserved `__`.
  EXPECT_EQ(sanitizeIdentifier("NULL_"), "NULL_");
  EXPECT_EQ(sanitizeIdentifier("INT32_MAX_"), "INT32_MAX_");
}

TEST(SanitizeGlobalName, StepsAroundLibraryFunctionsAtGlobalScope) {
  // A namespace may not share its name with a function in the same scope.
  EXPECT_EQ(sanitizeGlobalName("div"), "div_");
  EXPECT_EQ(sanitizeGlobalName("time"), "time_");
  EXPECT_EQ(sanitizeGlobalName("pipe"), "pipe_");
  EXPECT_EQ(sanitizeGlobalName("down_proj"), "down_proj");
  EXPECT_EQ(sanitizeGlobalName("class"), "class_");
  // The generated files' namespace aliases.
  EXPECT_EQ(sanitizeGlobalName("rt"), "rt_");
  EXPECT_EQ(sanitizeGlobalName("tile"), "tile_");
  // Inside a function or a namespace the same names are fine.
  EXPECT_EQ(sanitizeIdentifier("div"), "div");
}

TEST(SanitizeIdentifier, AvoidsReservedUnderscores) {
  EXPECT_EQ(sanitizeIdentifier("__x"), "v_x");
  EXPECT_EQ(sanitizeIdentifier("_X"), "v_X");
  EXPECT_EQ(sanitizeIdentifier("_"), "v_");
  EXPECT_EQ(sanitizeIdentifier("a__b"), "a_b");
  EXPECT_EQ(sanitizeIdentifier("x___"), "x_");
}

TEST(SanitizeIdentifier, PrefixesLeadingDigits) {
  EXPECT_EQ(sanitizeIdentifier("1st"), "v1st");
  EXPECT_EQ(sanitizeIdentifier("0"), "v0");
}

TEST(SanitizeIdentifier, EmptyIsV) { EXPECT_EQ(sanitizeIdentifier(""), "v"); }

TEST(SanitizeIdentifier, SpellsOtherCodePointsInHex) {
  // ö is U+00F6, ß U+00DF: decoded from UTF-8, not byte by byte.
  EXPECT_EQ(sanitizeIdentifier("größe"), "gr_uf6_udf_e");
  EXPECT_EQ(sanitizeIdentifier("日本"), "v_u65e5_u672c_");
  EXPECT_EQ(sanitizeIdentifier("a;b"), "a_u3b_b");
  EXPECT_EQ(sanitizeIdentifier("a b"), "a_u20_b");
  // Malformed UTF-8: each byte on its own.
  EXPECT_EQ(sanitizeIdentifier("\xff\xfe"), "v_uff_ufe_");
}

TEST(SanitizeIdentifier, QuotesSemicolonsAndCommentsCannotEscape) {
  std::string id = sanitizeIdentifier("x\"; abort(); /*");
  EXPECT_TRUE(isPlainIdentifier(id));
  EXPECT_EQ(id, "x_u22_u3b_u20_abort_u28_u29_u3b_u20_u2f_u2a_");
  EXPECT_TRUE(isPlainIdentifier(sanitizeIdentifier("*/")));
  EXPECT_TRUE(isPlainIdentifier(sanitizeIdentifier("x\n#define y")));
}

TEST(SanitizeIdentifier, LeavesBpPrefixToGeneratedCode) {
  EXPECT_EQ(sanitizeIdentifier("bp_ctx"), "u_bp_ctx");
  EXPECT_EQ(sanitizeIdentifier("BP_OK"), "u_BP_OK");
  EXPECT_EQ(sanitizeIdentifier("bp"), "u_bp");
  EXPECT_EQ(sanitizeIdentifier("BP"), "u_BP");
  // Also when the prefix only appears after sanitizing.
  EXPECT_EQ(sanitizeIdentifier("bp__ctx"), "u_bp_ctx");
}

TEST(SanitizeIdentifier, EveryResultIsAPlainNonKeywordIdentifier) {
  for (const std::string &name : hostileNames()) {
    std::string id = sanitizeIdentifier(name);
    EXPECT_TRUE(isPlainIdentifier(id)) << "for '" << name << "'";
    EXPECT_FALSE(isCppKeyword(id)) << "for '" << name << "'";
    EXPECT_NE(id.rfind("bp_", 0), 0u) << "for '" << name << "'";
    EXPECT_NE(id.rfind("BP_", 0), 0u) << "for '" << name << "'";
  }
}

TEST(SanitizeIdentifier, IsStable) {
  for (const std::string &name : hostileNames()) {
    std::string first = sanitizeIdentifier(name);
    EXPECT_EQ(sanitizeIdentifier(name), first) << "for '" << name << "'";
    // A second pass changes nothing: generated names can be fed back.
    EXPECT_EQ(sanitizeIdentifier(first), first) << "for '" << name << "'";
  }
}

TEST(NameScope, SuffixesRepeatedHints) {
  NameScope scope;
  EXPECT_EQ(scope.unique("x"), "x");
  EXPECT_EQ(scope.unique("x"), "x_1");
  EXPECT_EQ(scope.unique("x"), "x_2");
  EXPECT_TRUE(scope.isTaken("x_1"));
  EXPECT_FALSE(scope.isTaken("x_3"));
}

TEST(NameScope, SuffixOfANameEndingInUnderscoreMakesNoDoubleUnderscore) {
  NameScope scope;
  EXPECT_EQ(scope.unique("int"), "int_");
  EXPECT_EQ(scope.unique("int"), "int_1");
  EXPECT_EQ(scope.unique("int_"), "int_2");
}

TEST(NameScope, ReservedNamesAreNeverHandedOut) {
  NameScope scope;
  scope.reserve("tile");
  scope.reserve("rt");
  EXPECT_TRUE(scope.isTaken("tile"));
  EXPECT_EQ(scope.unique("tile"), "tile_1");
  EXPECT_EQ(scope.unique("rt"), "rt_1");
}

TEST(NameScope, SkipsSuffixesTakenByOtherNames) {
  NameScope scope;
  EXPECT_EQ(scope.unique("x_1"), "x_1");
  EXPECT_EQ(scope.unique("x"), "x");
  EXPECT_EQ(scope.unique("x"), "x_2");
}

TEST(NameScope, DifferentUserNamesNeverCollide) {
  // These sanitize to the same identifier or to each other's suffixed form.
  NameScope scope;
  std::set<std::string> seen;
  for (const char *hint : {"a_b", "a__b", "a___b", "a_b_1", "a_b", "_a_b",
                           "v_a_b", "", "v", "v_1"}) {
    std::string id = scope.unique(hint);
    EXPECT_TRUE(isPlainIdentifier(id)) << "for '" << hint << "'";
    EXPECT_TRUE(seen.insert(id).second)
        << "'" << hint << "' got '" << id << "' twice";
  }
}

TEST(NameScope, AllHostileNamesGetDistinctIdentifiers) {
  NameScope scope;
  std::set<std::string> seen;
  for (const std::string &name : hostileNames()) {
    std::string id = scope.unique(name);
    EXPECT_TRUE(isPlainIdentifier(id)) << "for '" << name << "'";
    EXPECT_TRUE(seen.insert(id).second) << "for '" << name << "'";
  }
}

TEST(NameScope, IsDeterministic) {
  NameScope a, b;
  for (int round = 0; round < 3; ++round)
    for (const std::string &name : hostileNames())
      EXPECT_EQ(a.unique(name), b.unique(name)) << "for '" << name << "'";
}

TEST(EscapeCppString, KeepsPrintableAscii) {
  EXPECT_EQ(escapeCppString(""), "");
  EXPECT_EQ(escapeCppString("gm_pipe_buffer_0"), "gm_pipe_buffer_0");
  EXPECT_EQ(escapeCppString("a b;c'd/*e*/"), "a b;c'd/*e*/");
}

TEST(EscapeCppString, EscapesQuotesAndBackslashes) {
  EXPECT_EQ(escapeCppString("x\"; system(\"rm\"); //"),
            "x\\\"; system(\\\"rm\\\"); //");
  EXPECT_EQ(escapeCppString("a\\"), "a\\\\");
}

TEST(EscapeCppString, EscapesTrigraphs) {
  // `??=` is `#` and `??/` a backslash where trigraphs are on.
  EXPECT_EQ(escapeCppString("?\?="), "\\?\\?=");
  EXPECT_EQ(escapeCppString("?\?/\""), "\\?\\?/\\\"");
}

TEST(EscapeCppString, EscapesControlAndNonAsciiBytesInOctal) {
  EXPECT_EQ(escapeCppString("a\nb"), "a\\012b");
  EXPECT_EQ(escapeCppString(std::string("\0", 1)), "\\000");
  EXPECT_EQ(escapeCppString("ö"), "\\303\\266");
  // Three octal digits always: a following digit is not part of the escape.
  EXPECT_EQ(escapeCppString("\x01"
                            "7"),
            "\\0017");
  EXPECT_EQ(escapeCppString("\x7f"), "\\177");
}

TEST(EscapeCppComment, KeepsPrintableAscii) {
  EXPECT_EQ(escapeCppComment(""), "");
  EXPECT_EQ(escapeCppComment("main"), "main");
  EXPECT_EQ(escapeCppComment("x\"; abort(); /*"), "x\"; abort(); /*");
  // `*/` cannot end a `//` comment.
  EXPECT_EQ(escapeCppComment("a */ b"), "a */ b");
}

TEST(EscapeCppComment, StaysOnOneLine) {
  EXPECT_EQ(escapeCppComment("a\nb"), "a_b");
  EXPECT_EQ(escapeCppComment("a\r\nb"), "a__b");
  // A trailing backslash would splice the next line into the comment.
  EXPECT_EQ(escapeCppComment("x\\"), "x_");
  EXPECT_EQ(escapeCppComment("ö"), "__");
}

TEST(EscapeCppComment, BreaksTrigraphs) {
  // Under -trigraphs `??/` is a backslash: at the end of a comment it would
  // continue it onto the next line. No `??` survives.
  for (const char *text : {"?\?/", "?\?=", "a?\?\?/", "?\? ?"}) {
    std::string escaped = escapeCppComment(text);
    EXPECT_EQ(escaped.find("??"), std::string::npos)
        << "'" << text << "' gave '" << escaped << "'";
  }
  EXPECT_EQ(escapeCppComment("what?"), "what?");
  EXPECT_EQ(escapeCppComment("?\?="), "?_=");
}

} // namespace
