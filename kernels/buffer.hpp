#pragma once

// Buffers that know where they live (docs/design.md, "Buffers and where they live"). An
// algorithm is written once against Buffer and the operations of kernels/ops.hpp; a buffer in
// host memory goes to the kernels of kernels/, one in CUDA device memory to those of
// kernels/cuda/, and the communicator picks its back end (MPI, NCCL) the same way.

#include <cstddef>
#include <ranges>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace commsgd::kernels {

enum class Memory { host, cuda };

// Where a buffer's elements are and, in CUDA memory, the stream that orders the work on them
// (a cudaStream_t, held opaquely so that host code needs no CUDA header; null is the default
// stream, on which LibTorch computes unless told otherwise). Work on a device buffer is enqueued
// on its stream and the host does not wait for it, as NCCL's calls take (buffer, count, type,
// communicator, stream).
struct Place {
  Memory memory = Memory::host;
  void* stream = nullptr;
  friend bool operator==(const Place&, const Place&) = default;
};

inline constexpr Place kHost{};
inline Place cuda_place(void* stream) {
  return {Memory::cuda, stream};
}

// A span with a place. Host spans and containers convert to host buffers implicitly, so host
// code (and every test written for it) passes what it always did.
template <class T>
class Buffer {
 public:
  Buffer() = default;
  Buffer(T* data, std::size_t size, Place place) : data_(data), size_(size), place_(place) {}
  template <std::size_t N>
  Buffer(std::span<T, N> host) : data_(host.data()), size_(host.size()) {}  // NOLINT: implicit
  template <class Range>
  requires std::ranges::contiguous_range<Range> && std::ranges::sized_range<Range> &&
      std::is_convertible_v < std::ranges::range_value_t<Range>(*)
  [],
      T (*)[] > &&(!std::is_same_v<std::remove_cvref_t<Range>, Buffer>)
                    Buffer(Range&& host)  // NOLINT: implicit, as std::span's
      : data_(std::ranges::data(host)),
  size_(std::ranges::size(host)) {}
  // A buffer of T converts to one of const T.
  template <class U>
  requires(std::is_same_v<const U, T> && !std::is_same_v<U, T>)
      Buffer(const Buffer<U>& other)  // NOLINT: implicit
      : data_(other.data()), size_(other.size()), place_(other.place()) {}

  T* data() const { return data_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  Place place() const { return place_; }
  bool on_host() const { return place_.memory == Memory::host; }

  Buffer subspan(std::size_t offset, std::size_t count) const {
    if (offset > size_ || count > size_ - offset) {
      throw std::out_of_range("Buffer::subspan past the end");
    }
    return {data_ + offset, count, place_};
  }
  // The same elements, with the work on them enqueued on `place`'s stream (for a thread with a
  // stream of its own); the memory stays what it is.
  Buffer on(Place place) const {
    if (place.memory != place_.memory) {
      throw std::invalid_argument("Buffer::on: a place in another kind of memory");
    }
    return {data_, size_, place};
  }
  // The elements as a host span; throws std::logic_error for device memory, where a host
  // pointer would be dereferenced by mistake. `who` names the caller that needs host memory.
  std::span<T> host(const char* who) const {
    if (!on_host()) {
      throw std::logic_error(std::string(who) +
                             " works on host buffers only; this one is in CUDA memory");
    }
    return {data_, size_};
  }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
  Place place_{};
};

template <class T, std::size_t N>
Buffer(std::span<T, N>) -> Buffer<T>;

}  // namespace commsgd::kernels
