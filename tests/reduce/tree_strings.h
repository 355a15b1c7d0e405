// tests/reduce/tree_strings.h — a summation tree spelled out as text, for the tree tests: leaf i is
// "x<i>" and a sum of a and b is "(a+b)", so two trees are the same order exactly when their
// strings are equal.
#pragma once

#include <cstddef>
#include <string>

namespace zt_test {

// (a+b) spelled with append: GCC 12 warns falsely (-Wrestrict) on chained operator+ here.
inline std::string paren(const std::string& a, const std::string& b) {
  std::string s("(");
  s.append(a).append("+").append(b).append(")");
  return s;
}

inline std::string leaf_name(std::size_t i) { return std::string("x").append(std::to_string(i)); }

}  // namespace zt_test
