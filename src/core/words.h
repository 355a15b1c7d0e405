// core/words.h — the words of a closed choice: each enum value of a setting and the one word that
// names it on a command line, in a JSON summary and in printed lines.
//
// Why a table: a setting such as --precision is parsed once, into an enum, and every decision the
// program makes compares enum values; the word comes back only where text goes out. The table is
// the one place where word and value meet, so the parser (core/cli.h's add_enum), the printers
// and the error lines cannot disagree about either.
//
// How an enum takes part: next to the enum, in its own namespace, one function
//     constexpr auto words(E) { return std::array{Word{"a", E::a}, Word{"b", E::b}}; }
// which word_of() and parse_word() find by argument-dependent lookup. The table's order is the
// order --help lists the choices in. A module with many choices may keep all their tables in one
// tuple and answer words() for each from it (table_of). Not here: open-ended values (numbers,
// paths).
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>

#include "core/check.h"

namespace zt {

/// One word of a closed choice and the value it names.
template <typename E>
struct Word {
  std::string_view text;  ///< the word, as typed and as printed
  E value;                ///< the value it names
};

/// Word{"fp32", Precision::fp32} is a Word<Precision>: the table needs no type spelled out.
template <typename E>
Word(const char*, E) -> Word<E>;

/// The position of E's table among Tables (each a std::array of Word<...>), or sizeof...(Tables)
/// when none is E's. @return the index.
template <typename E, typename... Tables>
constexpr std::size_t table_index() {
  std::size_t index = 0;
  const bool found = ((std::is_same_v<typename Tables::value_type, Word<E>> || (++index, false)) || ...);
  return found ? index : sizeof...(Tables);
}

/// E's table out of a tuple of tables: how one words() template answers for every choice of a
/// module that lists their tables together. @param tables the tuple. @return E's table.
template <typename E, typename... Tables>
constexpr auto table_of(const std::tuple<Tables...>& tables) {
  static_assert(table_index<E, Tables...>() < sizeof...(Tables), "no table of words for this enum");
  return std::get<table_index<E, Tables...>()>(tables);
}

/// The word that names a value. @param value a value of an enum that has a words() table.
/// @return its word (zt::Error if the table lacks it: a table that misses a value is a bug).
template <typename E>
std::string word_of(E value) {
  for (const Word<E>& w : words(value))
    if (w.value == value) return std::string(w.text);
  ZT_FAIL("a value without a word in its table (", static_cast<long long>(value), ")");
}

/// The value a word names, if any. @param text the word. @return the value, or empty when no
/// word of the table is text (for callers with their own error line).
template <typename E>
std::optional<E> find_word(std::string_view text) {
  for (const Word<E>& w : words(E{}))
    if (w.text == text) return w.value;
  return std::nullopt;
}

/// The value a word names. @param text the word. @param what names the input in the error line
/// (e.g. "--precision"). @return the value; zt::Error "what: 'text' is not one of a|b|c" otherwise.
template <typename E>
E parse_word(std::string_view text, const std::string& what) {
  if (const std::optional<E> value = find_word<E>(text)) return *value;
  std::string choices;  // every word, joined: "fp32|fp16|bf16"
  for (const Word<E>& w : words(E{})) choices += (choices.empty() ? "" : "|") + std::string(w.text);
  ZT_FAIL(what, ": '", text, "' is not one of ", choices);
}

}  // namespace zt
