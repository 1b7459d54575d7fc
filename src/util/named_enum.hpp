#pragma once
// An enumeration's names in one table: name(), names() and parse() (the field named, "did
// you mean" and the allowed names in the error), so that no enumeration keeps a switch for
// its names beside a list for parsing, whose orders can drift apart.
#include <fmt/format.h>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/errors.hpp"
#include "util/suggest.hpp"

namespace collsim {

template <typename E>
class NamedEnum {
public:
  // `what` names a value in errors: "FIELD: unknown WHAT 'x'; allowed: ...".
  NamedEnum(std::string_view what, std::initializer_list<std::pair<E, std::string_view>> table)
      : what_(what), table_(table) {}

  std::string_view name(E value) const {
    for (const auto& [v, n] : table_)
      if (v == value) return n;
    return {};
  }

  // In the table's order.
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& entry : table_) out.emplace_back(entry.second);
    return out;
  }
  std::vector<E> values() const {
    std::vector<E> out;
    for (const auto& entry : table_) out.push_back(entry.first);
    return out;
  }

  E parse(std::string_view name, std::string_view field) const {
    for (const auto& [v, n] : table_)
      if (n == name) return v;
    throw InputError(fmt::format("{}: unknown {} '{}'{}; allowed: {}", field, what_, name, did_you_mean(name, names()),
                                 join(names())));
  }

private:
  std::string_view what_;
  std::vector<std::pair<E, std::string_view>> table_;
};

}  // namespace collsim
