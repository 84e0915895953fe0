#pragma once

#include <array>
#include <cstddef>
#include <string_view>

namespace commsgd::trainer {

// An option whose value is one of a few names, held as an enum: one table per option of the
// names and the values they stand for, which the parser, --help and the run record all read.
template <class E>
struct Choice {
  std::string_view name;
  E value;
};

template <class E, std::size_t N>
constexpr std::string_view name_of(const std::array<Choice<E>, N>& choices, E value) {
  for (const Choice<E>& c : choices) {
    if (c.value == value) return c.name;
  }
  return {};
}

}  // namespace commsgd::trainer
