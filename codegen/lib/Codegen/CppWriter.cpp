//===- CppWriter.cpp - Wrapping long generated lines ----------------------===//

#include "CppWriter.h"

#include "llvm/ADT/SmallVector.h"

#include <algorithm>

using namespace blockpipe::codegen;

namespace {

/// Where a line may break: the separators directly inside one bracket pair.
struct Group {
  size_t open = 0;  // index of `(`, `{` or `[`
  size_t close = 0; // index of the matching bracket
  llvm::SmallVector<size_t> commas, pluses;
};

/// The bracket groups of `text` closed on this line, in order of their
/// opening bracket, skipping string and character literals and comments (a
/// line may open a block or close one: those brackets are not groups).
std::vector<Group> scan(llvm::StringRef text, size_t &equals) {
  std::vector<Group> groups;
  llvm::SmallVector<size_t> stack; // indices into groups
  equals = llvm::StringRef::npos;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"' || c == '\'') {
      for (++i; i < text.size() && text[i] != c; ++i)
        if (text[i] == '\\')
          ++i;
      continue;
    }
    if (text.substr(i).starts_with("//"))
      break;
    if (text.substr(i).starts_with("/*")) {
      size_t end = text.find("*/", i + 2);
      if (end == llvm::StringRef::npos)
        break;
      i = end + 1;
      continue;
    }
    if (c == '(' || c == '{' || c == '[') {
      stack.push_back(groups.size());
      groups.push_back(Group{i, 0, {}, {}});
    } else if (c == ')' || c == '}' || c == ']') {
      if (!stack.empty())
        groups[stack.pop_back_val()].close = i;
    } else if (c == ',' && !stack.empty()) {
      groups[stack.back()].commas.push_back(i);
    } else if (c == '+' && !stack.empty() && i > 0 && text[i - 1] == ' ' &&
               i + 1 < text.size() && text[i + 1] == ' ') {
      groups[stack.back()].pluses.push_back(i);
    } else if (c == '=' && stack.empty() && equals == llvm::StringRef::npos &&
               i > 0 && text[i - 1] == ' ' && i + 1 < text.size() &&
               text[i + 1] == ' ') {
      equals = i;
    }
  }
  groups.erase(std::remove_if(groups.begin(), groups.end(),
                              [](const Group &group) { return !group.close; }),
               groups.end());
  return groups;
}

} // namespace

void CppWriter::wrap(llvm::StringRef text, size_t column) {
  auto emit = [&](llvm::StringRef piece, size_t at) {
    text_.append(at, ' ');
    text_.append(piece.begin(), piece.end());
    text_ += '\n';
  };
  llvm::StringRef trimmed = text.ltrim();
  if (column + text.size() <= kColumnLimit || trimmed.starts_with("//") ||
      trimmed.starts_with("#"))
    return emit(text, column);

  size_t equals;
  std::vector<Group> groups = scan(text, equals);
  // The first bracket pair with commas directly inside; else with `+`.
  const Group *chosen = nullptr;
  bool byComma = true;
  for (const Group &group : groups)
    if (!group.commas.empty()) {
      chosen = &group;
      break;
    }
  if (!chosen) {
    byComma = false;
    for (const Group &group : groups)
      if (!group.pluses.empty()) {
        chosen = &group;
        break;
      }
  }
  if (!chosen) {
    if (equals == llvm::StringRef::npos)
      return emit(text, column);
    // `lhs =` then the value, indented by 4.
    emit(text.substr(0, equals + 1), column);
    return wrap(text.substr(equals + 2), column + 4);
  }

  // Pieces: head up to and including the bracket, the items, the tail.
  llvm::StringRef head = text.substr(0, chosen->open + 1);
  llvm::SmallVector<std::string> items;
  size_t start = chosen->open + 1;
  for (size_t sep : byComma ? chosen->commas : chosen->pluses) {
    // The comma or `+` ends the line it breaks.
    size_t end = sep + 1;
    items.push_back(text.substr(start, end - start).trim().str());
    start = end;
  }
  items.push_back(text.substr(start, chosen->close - start).trim().str());
  items.back() += text.substr(chosen->close).str();

  // Continuation lines align after the bracket, or, when that leaves too
  // little room, start 4 columns in with the head alone on its line.
  size_t align = column + head.size();
  std::string current = head.str();
  size_t currentColumn = column;
  if (align > kColumnLimit / 2) {
    emit(head, column);
    align = column + 4;
    current.clear();
    currentColumn = align;
  }
  std::vector<std::pair<std::string, size_t>> lines;
  for (const std::string &item : items) {
    if (current.empty()) {
      current = item;
      continue;
    }
    const bool headOnly = current == head;
    std::string candidate = current + (headOnly ? "" : " ") + item;
    // The head keeps its first item (clang-format's "(" never ends a line
    // when aligning after it).
    if (headOnly || currentColumn + candidate.size() <= kColumnLimit) {
      current = std::move(candidate);
      continue;
    }
    lines.emplace_back(std::move(current), currentColumn);
    current = item;
    currentColumn = align;
  }
  lines.emplace_back(std::move(current), currentColumn);
  for (auto &[piece, at] : lines) {
    if (at + piece.size() > kColumnLimit && piece.size() < text.size())
      wrap(piece, at); // an item still too long: wrap it in turn
    else
      emit(piece, at);
  }
}
