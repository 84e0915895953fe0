#pragma once

// The operations an algorithm is written against, on buffers wherever they live: a host buffer
// goes to the loops of kernels/, a CUDA buffer to the kernels of kernels/cuda/ on its stream.
// Operands of one call share a place (else std::invalid_argument): nothing here copies between
// host and device behind the caller's back. In a build without CUDA a CUDA buffer is refused
// with std::logic_error.

#include <cstddef>
#include <cstdint>
#include <utility>

#include "kernels/buffer.hpp"
#include "kernels/sgd.hpp"

namespace commsgd::kernels::ops {

// Whether this build has the CUDA kernels.
bool cuda_built();

// to = from (sizes equal).
void copy(Buffer<const float> from, Buffer<float> to);
// acc += x.
void add(Buffer<float> acc, Buffer<const float> x);
// x *= factor.
void scale(Buffer<float> x, float factor);
// Σ x² in double (on a device, waits for the stream to return it).
double squared_norm(Buffer<const float> x);
// kernels::sgd_step.
void sgd_step(Buffer<float> params, Buffer<const float> grads, Buffer<float> momentum,
              const SgdHyperParams& hp);
// To and from IEEE binary16 (bf16 false) or bfloat16 bits.
void to_half(Buffer<const float> x, Buffer<std::uint16_t> out, bool bf16);
void from_half(Buffer<const std::uint16_t> h, Buffer<float> out, bool bf16);

// Raw memory in a place, for Storage: host memory from the heap, device memory stream-ordered.
void* allocate(std::size_t bytes, Place place);
void release(void* memory, Place place) noexcept;

// An owned array of T (trivially copyable) in one place, for an algorithm's own state: its
// residual, a message buffer. Contents are not kept when it grows; new elements are not set.
template <class T>
class Storage {
 public:
  Storage() = default;
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  ~Storage() { release(data_, place_); }
  Storage(Storage&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)),
        size_(std::exchange(other.size_, 0)),
        capacity_(std::exchange(other.capacity_, 0)),
        place_(other.place_) {}
  Storage& operator=(Storage&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    std::swap(capacity_, other.capacity_);
    std::swap(place_, other.place_);
    return *this;
  }

  // Room for `size` elements in `place`; reallocates only when it grows or moves.
  void resize(std::size_t size, Place place) {
    if (place != place_ || size > capacity_) {
      release(std::exchange(data_, nullptr), place_);
      capacity_ = 0;
      place_ = place;
      data_ = static_cast<T*>(allocate(size * sizeof(T), place));
      capacity_ = size;
    }
    size_ = size;
  }
  Buffer<T> buffer() { return {data_, size_, place_}; }
  Buffer<const T> buffer() const { return {data_, size_, place_}; }
  std::size_t size() const { return size_; }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
  Place place_{};
};

}  // namespace commsgd::kernels::ops
