// The state an algorithm carries from one iteration to the next (residuals, push-sum weights,
// iteration counters), written into and read back from a checkpoint as plain bytes. Reading
// checks every size, so a checkpoint of another model or algorithm is an error, not garbage.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace commsgd::algorithms {

class StateWriter {
 public:
  template <class T>
  requires std::is_trivially_copyable_v<T>
  void write(const T& value) { append(&value, sizeof(T)); }
  // A length, then the values.
  void write(std::span<const float> values) {
    write(static_cast<std::uint64_t>(values.size()));
    append(values.data(), values.size_bytes());
  }
  void write(std::span<const std::byte> bytes) {
    write(static_cast<std::uint64_t>(bytes.size()));
    append(bytes.data(), bytes.size());
  }
  void write(std::string_view text) { write(std::as_bytes(std::span(text))); }
  const std::vector<std::byte>& bytes() const { return bytes_; }

 private:
  void append(const void* data, std::size_t size) {
    const auto* p = static_cast<const std::byte*>(data);
    bytes_.insert(bytes_.end(), p, p + size);
  }
  std::vector<std::byte> bytes_;
};

class StateReader {
 public:
  explicit StateReader(std::span<const std::byte> bytes) : bytes_(bytes) {}

  template <class T>
  requires std::is_trivially_copyable_v<T> T read() {
    T value;
    std::memcpy(&value, take(sizeof(T)).data(), sizeof(T));
    return value;
  }
  // Values written by write(span): into `out`, which must have the written length.
  void read(std::span<float> out) {
    if (read<std::uint64_t>() != out.size()) {
      throw std::runtime_error("checkpoint: a buffer has a different size in this run");
    }
    read_into(out);
  }
  // Values written by write(span), whatever their length.
  void read(std::vector<float>& out) {
    out.resize(read<std::uint64_t>());
    read_into(out);
  }
  std::vector<std::byte> read_bytes() {
    const std::span<const std::byte> part = take(read<std::uint64_t>());
    return {part.begin(), part.end()};
  }
  std::string read_text() {
    const std::span<const std::byte> part = take(read<std::uint64_t>());
    return {reinterpret_cast<const char*>(part.data()), part.size()};
  }
  bool done() const { return bytes_.empty(); }

 private:
  void read_into(std::span<float> out) {
    std::memcpy(out.data(), take(out.size_bytes()).data(), out.size_bytes());
  }
  std::span<const std::byte> take(std::size_t n) {
    if (n > bytes_.size()) throw std::runtime_error("checkpoint: the algorithm state is truncated");
    const std::span<const std::byte> part = bytes_.first(n);
    bytes_ = bytes_.subspan(n);
    return part;
  }
  std::span<const std::byte> bytes_;
};

}  // namespace commsgd::algorithms
