//===- Naming.cpp - C++ identifiers from user names -----------------------===//

#include "blockpipe/Codegen/Naming.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"

using namespace blockpipe::codegen;

bool blockpipe::codegen::isCppKeyword(llvm::StringRef name) {
  static const llvm::StringSet<> keywords = {"alignas",
                                             "alignof",
                                             "and",
                                             "and_eq",
                                             "asm",
                                             "auto",
                                             "bitand",
                                             "bitor",
                                             "bool",
                                             "break",
                                             "case",
                                             "catch",
                                             "char",
                                             "char8_t",
                                             "char16_t",
                                             "char32_t",
                                             "class",
                                             "compl",
                                             "concept",
                                             "const",
                                             "consteval",
                                             "constexpr",
                                             "constinit",
                                             "const_cast",
                                             "continue",
                                             "co_await",
                                             "co_return",
                                             "co_yield",
                                             "decltype",
                                             "default",
                                             "delete",
                                             "do",
                                             "double",
                                             "dynamic_cast",
                                             "else",
                                             "enum",
                                             "explicit",
                                             "export",
                                             "extern",
                                             "false",
                                             "final",
                                             "float",
                                             "for",
                                             "friend",
                                             "goto",
                                             "if",
                                             "import",
                                             "inline",
                                             "int",
                                             "long",
                                             "module",
                                             "mutable",
                                             "namespace",
                                             "new",
                                             "noexcept",
                                             "not",
                                             "not_eq",
                                             "nullptr",
                                             "operator",
                                             "or",
                                             "or_eq",
                                             "override",
                                             "private",
                                             "protected",
                                             "public",
                                             "register",
                                             "reinterpret_cast",
                                             "requires",
                                             "return",
                                             "short",
                                             "signed",
                                             "sizeof",
                                             "static",
                                             "static_assert",
                                             "static_cast",
                                             "struct",
                                             "switch",
                                             "template",
                                             "this",
                                             "thread_local",
                                             "throw",
                                             "true",
                                             "try",
                                             "typedef",
                                             "typeid",
                                             "typename",
                                             "union",
                                             "unsigned",
                                             "using",
                                             "virtual",
                                             "void",
                                             "volatile",
                                             "wchar_t",
                                             "while",
                                             "xor",
                                             "xor_eq"};
  return keywords.contains(name);
}

/// Names that are macros or would be shadowed in the headers generated code
/// includes, and names the generated code itself relies on.
static bool isReservedByGeneratedCode(llvm::StringRef name) {
  static const llvm::StringSet<> reserved = {
      "NULL",     "EOF",      "INFINITY", "NAN",      "assert",  "errno",
      "offsetof", "stdin",    "stdout",   "stderr",   "std",     "blockpipe",
      "size_t",   "int8_t",   "int16_t",  "int32_t",  "int64_t", "uint8_t",
      "uint16_t", "uint32_t", "uint64_t", "ptrdiff_t"};
  if (reserved.contains(name))
    return true;
  // Macro-style names (INT32_MAX, UINT64_C, ...) are spelled in capitals
  // with an underscore; give them all a suffix rather than list them. One
  // that already ends in `_` is what that suffix makes: another `_` would
  // make a reserved `__`.
  bool macroStyle = name.contains('_') && !name.ends_with("_") &&
                    llvm::all_of(name, [](char c) {
                      return llvm::isUpper(c) || llvm::isDigit(c) || c == '_';
                    });
  return macroStyle;
}

/// Functions of the C and POSIX libraries that the headers generated code
/// includes declare at global scope: a namespace of the same name there
/// (the program's) would not compile.
static bool isGlobalLibraryFunction(llvm::StringRef name) {
  static const llvm::StringSet<> functions = {
      "abort",      "abs",          "access",        "acos",
      "acosh",      "alarm",        "aligned_alloc", "asin",
      "asinh",      "atan",         "atan2",         "atanh",
      "atexit",     "atof",         "atoi",          "atol",
      "atoll",      "bcmp",         "bcopy",         "bsearch",
      "bzero",      "calloc",       "cbrt",          "ceil",
      "chdir",      "chown",        "clock",         "clock_gettime",
      "clone",      "close",        "copysign",      "cos",
      "cosh",       "ctime",        "difftime",      "div",
      "dup",        "dup2",         "dysize",        "erf",
      "erfc",       "execl",        "execv",         "execve",
      "execvp",     "exit",         "exp",           "exp2",
      "expm1",      "fabs",         "fclose",        "fdim",
      "feof",       "ferror",       "fflush",        "fgetc",
      "fgets",      "floor",        "fma",           "fmax",
      "fmin",       "fmod",         "fopen",         "fork",
      "fprintf",    "fputc",        "fputs",         "fread",
      "free",       "freopen",      "frexp",         "fscanf",
      "fseek",      "fsetpos",      "fsync",         "ftell",
      "ftruncate",  "fwrite",       "getc",          "getchar",
      "getcwd",     "getenv",       "getpid",        "getppid",
      "gets",       "getuid",       "gmtime",        "hypot",
      "ilogb",      "index",        "isalnum",       "isalpha",
      "isatty",     "iscntrl",      "isdigit",       "isgraph",
      "islower",    "isprint",      "ispunct",       "isspace",
      "isupper",    "isxdigit",     "kill",          "labs",
      "ldexp",      "ldiv",         "lgamma",        "link",
      "llabs",      "lldiv",        "llrint",        "llround",
      "localeconv", "localtime",    "log",           "log10",
      "log1p",      "log2",         "logb",          "longjmp",
      "lrint",      "lround",       "lseek",         "malloc",
      "mblen",      "mbstowcs",     "mbtowc",        "memchr",
      "memcmp",     "memcpy",       "memmove",       "memset",
      "mkdir",      "mkstemp",      "mktime",        "modf",
      "nan",        "nanosleep",    "nearbyint",     "nextafter",
      "nexttoward", "nice",         "open",          "pause",
      "perror",     "pipe",         "poll",          "pow",
      "pread",      "printf",       "putc",          "putchar",
      "puts",       "pwrite",       "qsort",         "quick_exit",
      "raise",      "rand",         "random",        "read",
      "readlink",   "realloc",      "realpath",      "remainder",
      "remove",     "remquo",       "rename",        "rewind",
      "rindex",     "rint",         "rmdir",         "round",
      "sbrk",       "scalbn",       "scanf",         "sched_yield",
      "select",     "setbuf",       "setenv",        "setjmp",
      "setlocale",  "setvbuf",      "signal",        "sin",
      "sinh",       "sleep",        "snprintf",      "sprintf",
      "sqrt",       "srand",        "srandom",       "sscanf",
      "stat",       "stime",        "strcat",        "strchr",
      "strcmp",     "strcoll",      "strcpy",        "strcspn",
      "strdup",     "strerror",     "strftime",      "strlen",
      "strncat",    "strncmp",      "strncpy",       "strndup",
      "strpbrk",    "strrchr",      "strsep",        "strspn",
      "strstr",     "strtod",       "strtof",        "strtok",
      "strtol",     "strtold",      "strtoll",       "strtoul",
      "strtoull",   "symlink",      "sync",          "sysconf",
      "system",     "tan",          "tanh",          "tgamma",
      "time",       "timer_create", "tmpfile",       "tmpnam",
      "tolower",    "toupper",      "trunc",         "truncate",
      "ttyname",    "tzset",        "ungetc",        "unlink",
      "unsetenv",   "usleep",       "vfprintf",      "vprintf",
      "vsnprintf",  "vsprintf",     "wait",          "wcstombs",
      "wctomb",     "write",
  };
  return functions.contains(name);
}

std::string blockpipe::codegen::libraryName(llvm::StringRef project) {
  // glibc's libraries, the compiler's runtimes and the usual system ones a
  // link line names with -l.
  static const llvm::StringSet<> system = {"anl",
                                           "asan",
                                           "atomic",
                                           "BrokenLocale",
                                           "c",
                                           "crypt",
                                           "crypto",
                                           "cuda",
                                           "cudart",
                                           "dl",
                                           "gcc",
                                           "gcc_s",
                                           "gfortran",
                                           "gomp",
                                           "lsan",
                                           "m",
                                           "mpi",
                                           "mvec",
                                           "nsl",
                                           "omp",
                                           "pthread",
                                           "quadmath",
                                           "resolv",
                                           "rt",
                                           "ssl",
                                           "stdc++",
                                           "tsan",
                                           "ubsan",
                                           "util",
                                           "z",
                                           "blockpipe_runtime",
                                           "blockpipe_target"};
  if (system.contains(project))
    return (project + "_program").str();
  return project.str();
}

std::string blockpipe::codegen::sanitizeGlobalName(llvm::StringRef name) {
  std::string identifier = sanitizeIdentifier(name);
  // `rt` and `tile` are namespace aliases of the generated files.
  if (isGlobalLibraryFunction(identifier) || identifier == "rt" ||
      identifier == "tile")
    identifier += "_";
  return identifier;
}

/// Decodes one UTF-8 code point at `text[i]`, advancing `i`; a malformed
/// byte is returned as itself.
static uint32_t decodeUtf8(llvm::StringRef text, size_t &i) {
  auto byte = [&](size_t k) { return static_cast<uint8_t>(text[k]); };
  uint8_t lead = byte(i);
  unsigned length = lead < 0x80           ? 1
                    : (lead >> 5) == 0x6  ? 2
                    : (lead >> 4) == 0xE  ? 3
                    : (lead >> 3) == 0x1E ? 4
                                          : 0;
  if (length <= 1 || i + length > text.size()) {
    ++i;
    return lead;
  }
  uint32_t cp = lead & (0x7F >> length);
  for (unsigned k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) {
      ++i;
      return lead;
    }
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  i += length;
  return cp;
}

std::string blockpipe::codegen::sanitizeIdentifier(llvm::StringRef name) {
  std::string out;
  for (size_t i = 0; i < name.size();) {
    char c = name[i];
    if (llvm::isAlnum(c) || c == '_') {
      out += c;
      ++i;
      continue;
    }
    uint32_t cp = decodeUtf8(name, i);
    out += "_u" + llvm::utohexstr(cp, /*LowerCase=*/true) + "_";
  }
  // `__` anywhere is reserved; so is a leading `_`.
  std::string collapsed;
  for (char c : out)
    if (c != '_' || collapsed.empty() || collapsed.back() != '_')
      collapsed += c;
  if (collapsed.empty())
    return "v";
  if (llvm::isDigit(collapsed.front()) || collapsed.front() == '_')
    collapsed = "v" + collapsed;
  llvm::StringRef result(collapsed);
  if (result.starts_with("bp_") || result.starts_with("BP_") ||
      result == "bp" || result == "BP")
    return "u_" + collapsed;
  if (isCppKeyword(result) || isReservedByGeneratedCode(result))
    return collapsed + "_";
  return collapsed;
}

void NameScope::reserve(llvm::StringRef identifier) {
  taken_.insert(identifier);
}

std::string NameScope::unique(llvm::StringRef hint) {
  std::string base = sanitizeIdentifier(hint);
  if (taken_.insert(base).second)
    return base;
  // `int_` + `_1` would make a reserved `__`.
  std::string stem = llvm::StringRef(base).ends_with("_") ? base : base + "_";
  unsigned &next = nextSuffix_[base];
  while (true) {
    std::string candidate = stem + std::to_string(++next);
    if (taken_.insert(candidate).second)
      return candidate;
  }
}

std::string blockpipe::codegen::escapeCppString(llvm::StringRef text) {
  std::string out;
  for (unsigned char c : text) {
    if (c == '"' || c == '\\' || c == '?') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
    } else {
      // Octal escapes take at most three digits, so a following digit can
      // never be read as part of the escape.
      out += '\\';
      out += static_cast<char>('0' + ((c >> 6) & 7));
      out += static_cast<char>('0' + ((c >> 3) & 7));
      out += static_cast<char>('0' + (c & 7));
    }
  }
  return out;
}

std::string blockpipe::codegen::escapeCppComment(llvm::StringRef text) {
  std::string out;
  for (unsigned char c : text) {
    // A backslash at the end of a `//` comment would continue it onto the
    // next line, and so would `??/` where trigraphs are on: no `??` either.
    // `*/` cannot end a `//` comment.
    bool trigraph = c == '?' && !out.empty() && out.back() == '?';
    if (c >= 0x20 && c < 0x7F && c != '\\' && !trigraph)
      out += static_cast<char>(c);
    else
      out += '_';
  }
  return out;
}
