#pragma once

// The operations an algorithm is written against, on buffers wherever they live: a host buffer
// goes to the loops of kernels/, a CUDA buffer to the kernels of kernels/cuda/ on its stream.
// Operands of one call share a place (else std::invalid_argument): nothing here copies between
// host and device behind the caller's back. In a build without CUDA a CUDA buffer is refused
// with std::logic_error.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>

#include "kernels/buffer.hpp"
#include "kernels/low_rank.hpp"
#include "kernels/sgd.hpp"
#include "kernels/sparse_set.hpp"

namespace commsgd::kernels::ops {

// Whether this build has the CUDA kernels.
bool cuda_built();

// Bytes the operations below have copied between host and device memory in this process (over
// PCIe, on most machines): what a step of an algorithm on device buffers costs the bus.
std::uint64_t bus_bytes();

// to = from (sizes equal).
void copy(Buffer<const float> from, Buffer<float> to);
// acc += x.
void add(Buffer<float> acc, Buffer<const float> x);
// acc −= x.
void subtract(Buffer<float> acc, Buffer<const float> x);
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

// Gossip's mixing: x = (x + Σ_b blocks_b)·share, where blocks holds n blocks of x's size back to
// back, added in order (share 1: a plain sum, exactly).
void add_blocks(Buffer<float> x, Buffer<const float> blocks, float share);
// x += a − b, the difference rounded first (adpsgd's fold of a local step into the parameters
// it gossips).
void add_difference(Buffer<float> x, Buffer<const float> a, Buffer<const float> b);
// Σ (a − b)², in double (on a device, waits for the stream to return it).
double squared_distance(Buffer<const float> a, Buffer<const float> b);
// x = 0.
void fill_zero(Buffer<float> x);
// Between a buffer and host memory, sizes equal (on a device: waits for the stream). For state
// that leaves or enters a process (checkpoints), not for a step's path.
void copy_to_host(Buffer<const float> from, std::span<float> to);
void copy_from_host(std::span<const float> from, Buffer<float> to);

// The compressed family's codes: kernels/sign_bits.hpp and kernels/qsgd.hpp, the same bits in
// either place.
// Packs the signs of v into bits (sign_words(v.size()) words).
void pack_signs(Buffer<const float> v, Buffer<std::uint64_t> bits);
// out[j] += ±scale, the sign of entry first + j of `bits`.
void add_signs(Buffer<const std::uint64_t> bits, std::size_t first, float scale, Buffer<float> out);
// x[i] = sign(x[i]): −1, 0 or 1.
void sign_in_place(Buffer<float> x);
// Σ |x_i| in double (on a device, waits for the stream to return it).
double l1_norm(Buffer<const float> x);
// QSGD's code and norms of v, bucket by bucket (kernels::qsgd_encode_buckets).
void qsgd_encode_buckets(Buffer<const float> v, std::size_t bucket, unsigned levels,
                         std::uint64_t key, Buffer<std::uint64_t> code, Buffer<float> norms);
// out += scale · the decoded code (kernels::qsgd_decode_add_buckets).
void qsgd_decode_add_buckets(Buffer<const std::uint64_t> code, Buffer<const float> norms,
                             std::size_t bucket, unsigned levels, float scale, Buffer<float> out);

// PowerSGD's products (kernels/low_rank.hpp); on a device, sums in another order than the
// host's, so the same values to rounding.
void multiply(Buffer<const float> m, MatrixShape shape, Buffer<const float> q, Buffer<float> p);
void multiply_transposed(Buffer<const float> m, MatrixShape shape, Buffer<const float> p,
                         Buffer<float> q);
void outer_product(Buffer<const float> p, Buffer<const float> q, MatrixShape shape,
                   Buffer<float> m);
void orthonormalize_columns(Buffer<float> columns, std::size_t length, std::size_t rank);

// A stream of one's own, for a thread whose work goes on beside the caller's (a communication
// thread) on buffers in `memory`: on a device, a new CUDA stream on the current device that
// neither waits for the default stream nor makes it wait, so that a message waiting on a peer
// never holds up training; on the host nothing (host calls return done). Work on it is ordered
// against other streams by order_after only. Destroy it after the memory allocated on it.
class SideStream {
 public:
  explicit SideStream(Memory memory);
  ~SideStream();
  SideStream(const SideStream&) = delete;
  SideStream& operator=(const SideStream&) = delete;
  Place place() const { return place_; }
  // Makes the stream's device the calling thread's current one (a new thread starts on device
  // 0, where this stream's kernels cannot be launched). Nothing on the host.
  void enter() const;

 private:
  Place place_;
  int device_ = 0;
};

// A point in one stream's work that another stream can be made to wait for (a CUDA event), for
// two threads that share a buffer, each with its stream: one records after its work on the
// buffer, the other's stream waits for the latest record before its own. Nothing on the host.
class StreamPoint {
 public:
  explicit StreamPoint(Memory memory);  // on the current device
  ~StreamPoint();
  StreamPoint(const StreamPoint&) = delete;
  StreamPoint& operator=(const StreamPoint&) = delete;
  // Marks the work enqueued on `place`'s stream so far.
  void record(Place place);
  // Work enqueued on `place`'s stream from now on runs after the work the latest record marked
  // (none before the first record).
  void wait(Place place) const;

 private:
  void* event_ = nullptr;  // a cudaEvent_t
};

// From now on, work enqueued on `later`'s stream runs after the work enqueued on `earlier`'s so
// far (a CUDA event; the host does not wait). Nothing between host places, whose calls return
// done.
void order_after(Place later, Place earlier);

// What the sparse operations below keep on a device between calls: the copies of the host sets
// they were given. Nothing on the host.
class SparseStaging {
 public:
  SparseStaging();
  ~SparseStaging();
  SparseStaging(const SparseStaging&) = delete;
  SparseStaging& operator=(const SparseStaging&) = delete;
  struct Device;
  Device& device();

 private:
  std::unique_ptr<Device> device_;
};

// dense[s.indices[i]] += s.values[i] for a set on the host (kernels::scatter_add); a dense buffer
// on a device gets the set copied there first: s.size() entries over the bus, not d.
void scatter_add(const SparseSet& s, Buffer<float> dense, SparseStaging& staging);
// Error feedback (kernels::zero_applied): dense[s.indices[i]] = 0 where applied[i] != 0; on a
// device, the set and the mask are copied there first.
void zero_applied(Buffer<float> dense, const SparseSet& s, std::span<const std::uint8_t> applied,
                  SparseStaging& staging);

// The selections of kernels/ that have a CUDA twin (kernels/cuda/), for entries on a device:
// each selects there, on the buffer's stream, the entries its host twin selects, and hands them
// to the host: k entries over the bus rather than d. (Gaussian's threshold comes from a mean and
// deviation summed in another order, so it may differ in its last bits.)
enum class SelectionKernel { exact, gaussian, dgc, random };
class DeviceSelection {
 public:
  explicit DeviceSelection(SelectionKernel kernel);
  ~DeviceSelection();
  DeviceSelection(const DeviceSelection&) = delete;
  DeviceSelection& operator=(const DeviceSelection&) = delete;
  // density: gaussian's; seed: random's (the host twin's seed of this iteration).
  void select(Buffer<const float> x, std::size_t k, double density, std::uint64_t seed,
              SparseSet& out);

 private:
  struct State;
  SelectionKernel kernel_;
  std::unique_ptr<State> state_;  // made on first use
};

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

// Moves `s` to `place`, contents kept, through host memory: for state restored from a
// checkpoint onto the host before the model's place is known. Nothing if it is in that kind of
// memory already.
void relocate(Storage<float>& s, Place place);

}  // namespace commsgd::kernels::ops
