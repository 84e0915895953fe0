#include "kernels/ops.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/half_precision.hpp"
#include "kernels/qsgd.hpp"
#include "kernels/sign_bits.hpp"
#include "kernels/sparse_ops.hpp"
#include "kernels/vector_ops.hpp"

#ifdef COMMSGD_WITH_CUDA
#include <cuda_runtime_api.h>

#include "kernels/cuda/device_array.hpp"
#include "kernels/cuda/low_rank.hpp"
#include "kernels/cuda/qsgd.hpp"
#include "kernels/cuda/sampling.hpp"
#include "kernels/cuda/sign_bits.hpp"
#include "kernels/cuda/sparse_ops.hpp"
#include "kernels/cuda/threshold.hpp"
#include "kernels/cuda/topk.hpp"
#include "kernels/cuda/vector_ops.hpp"
#endif

namespace commsgd::kernels::ops {
namespace {

std::atomic<std::uint64_t> bus_bytes_copied{0};

// Unused in a build without CUDA, where nothing crosses.
[[maybe_unused]] void count_bus(std::uint64_t bytes) {
  bus_bytes_copied.fetch_add(bytes, std::memory_order_relaxed);
}
// A sparse set of `entries` crosses the bus as its values, its indices and its count.
[[maybe_unused]] std::uint64_t sparse_bytes(std::size_t entries) {
  return 8 * static_cast<std::uint64_t>(entries) + 4;
}

// The place every operand of `call` shares.
template <class... Buffers>
Place common_place(const char* call, const Buffers&... operands) {
  const Place places[] = {operands.place()...};
  for (const Place& p : places) {
    if (p != places[0]) {
      throw std::invalid_argument(std::string(call) + ": operands in different places");
    }
  }
  return places[0];
}

template <class... Buffers>
void same_size(const char* call, std::size_t size, const Buffers&... operands) {
  if (((operands.size() != size) || ...)) {
    throw std::invalid_argument(std::string(call) + ": operands differ in size");
  }
}

#ifdef COMMSGD_WITH_CUDA
cudaStream_t stream_of(Place p) {
  return static_cast<cudaStream_t>(p.stream);
}
#else
[[noreturn]] void no_cuda(const char* call) {
  throw std::logic_error(std::string(call) +
                         ": a buffer in CUDA memory, and commsgd was built without CUDA");
}
#endif

}  // namespace

std::uint64_t bus_bytes() {
  return bus_bytes_copied.load(std::memory_order_relaxed);
}

bool cuda_built() {
#ifdef COMMSGD_WITH_CUDA
  return true;
#else
  return false;
#endif
}

void copy(Buffer<const float> from, Buffer<float> to) {
  const Place p = common_place("copy", from, to);
  same_size("copy", from.size(), to);
  if (p.memory == Memory::host) {
    if (!from.empty()) std::memmove(to.data(), from.data(), from.size() * sizeof(float));
    return;
  }
#ifdef COMMSGD_WITH_CUDA
  cuda::check(cudaMemcpyAsync(to.data(), from.data(), from.size() * sizeof(float),
                              cudaMemcpyDeviceToDevice, stream_of(p)),
              "cudaMemcpyAsync");
#else
  no_cuda("copy");
#endif
}

void add(Buffer<float> acc, Buffer<const float> x) {
  const Place p = common_place("add", acc, x);
  same_size("add", acc.size(), x);
  if (p.memory == Memory::host) {
    return kernels::add(acc.host("add"), x.host("add"));
  }
#ifdef COMMSGD_WITH_CUDA
  cuda::add(acc.data(), x.data(), acc.size(), stream_of(p));
#else
  no_cuda("add");
#endif
}

void subtract(Buffer<float> acc, Buffer<const float> x) {
  const Place p = common_place("subtract", acc, x);
  same_size("subtract", acc.size(), x);
  if (p.memory == Memory::host) {
    return kernels::subtract(acc.host("subtract"), x.host("subtract"));
  }
#ifdef COMMSGD_WITH_CUDA
  cuda::subtract(acc.data(), x.data(), acc.size(), stream_of(p));
#else
  no_cuda("subtract");
#endif
}

void scale(Buffer<float> x, float factor) {
  if (x.on_host()) return kernels::scale(x.host("scale"), factor);
#ifdef COMMSGD_WITH_CUDA
  cuda::scale(x.data(), x.size(), factor, stream_of(x.place()));
#else
  no_cuda("scale");
#endif
}

double squared_norm(Buffer<const float> x) {
  if (x.on_host()) return kernels::squared_norm(x.host("squared_norm"));
#ifdef COMMSGD_WITH_CUDA
  count_bus(sizeof(double));
  return cuda::squared_norm(x.data(), x.size(), stream_of(x.place()));
#else
  no_cuda("squared_norm");
#endif
}

void sgd_step(Buffer<float> params, Buffer<const float> grads, Buffer<float> momentum,
              const SgdHyperParams& hp) {
  const Place p = common_place("sgd_step", params, grads, momentum);
  if (p.memory == Memory::host) {
    return kernels::sgd_step(params.host("sgd_step"), grads.host("sgd_step"),
                             momentum.host("sgd_step"), hp);
  }
  same_size("sgd_step", params.size(), grads, momentum);
#ifdef COMMSGD_WITH_CUDA
  cuda::sgd_step(params.data(), grads.data(), momentum.data(), params.size(), hp, stream_of(p));
#else
  no_cuda("sgd_step");
#endif
}

void pack_signs(Buffer<const float> v, Buffer<std::uint64_t> bits) {
  const Place p = common_place("pack_signs", v, bits);
  if (p.memory == Memory::host) {
    return kernels::pack_signs(v.host("pack_signs"), bits.host("pack_signs"));
  }
  if (bits.size() != sign_words(v.size())) {
    throw std::invalid_argument("pack_signs: the bits need ⌈entries / 64⌉ words");
  }
#ifdef COMMSGD_WITH_CUDA
  cuda::pack_signs(v.data(), v.size(), bits.data(), stream_of(p));
#else
  no_cuda("pack_signs");
#endif
}

void add_signs(Buffer<const std::uint64_t> bits, std::size_t first, float scale,
               Buffer<float> out) {
  const Place p = common_place("add_signs", bits, out);
  if (p.memory == Memory::host) {
    return kernels::add_signs(bits.host("add_signs"), first, scale, out.host("add_signs"));
  }
  if (first + out.size() > bits.size() * kSignsPerWord) {
    throw std::invalid_argument("add_signs: the entries run past the packed signs");
  }
#ifdef COMMSGD_WITH_CUDA
  cuda::add_signs(bits.data(), first, scale, out.data(), out.size(), stream_of(p));
#else
  no_cuda("add_signs");
#endif
}

void sign_in_place(Buffer<float> x) {
  if (x.on_host()) return kernels::sign_in_place(x.host("sign_in_place"));
#ifdef COMMSGD_WITH_CUDA
  cuda::sign_in_place(x.data(), x.size(), stream_of(x.place()));
#else
  no_cuda("sign_in_place");
#endif
}

double l1_norm(Buffer<const float> x) {
  if (x.on_host()) return kernels::l1_norm(x.host("l1_norm"));
#ifdef COMMSGD_WITH_CUDA
  count_bus(sizeof(double));
  return cuda::l1_norm(x.data(), x.size(), stream_of(x.place()));
#else
  no_cuda("l1_norm");
#endif
}

void qsgd_encode_buckets(Buffer<const float> v, std::size_t bucket, unsigned levels,
                         std::uint64_t key, Buffer<std::uint64_t> code, Buffer<float> norms) {
  const Place p = common_place("qsgd_encode_buckets", v, code, norms);
  if (p.memory == Memory::host) {
    const char* who = "qsgd_encode_buckets";
    return kernels::qsgd_encode_buckets(v.host(who), bucket, levels, key, code.host(who),
                                        norms.host(who));
  }
  check_qsgd_sizes(v.size(), bucket, levels, code.size(), norms.size());
#ifdef COMMSGD_WITH_CUDA
  cuda::qsgd_encode_buckets(v.data(), v.size(), bucket, levels, key, code.data(), norms.data(),
                            stream_of(p));
#else
  no_cuda("qsgd_encode_buckets");
#endif
}

void qsgd_decode_add_buckets(Buffer<const std::uint64_t> code, Buffer<const float> norms,
                             std::size_t bucket, unsigned levels, float scale, Buffer<float> out) {
  const Place p = common_place("qsgd_decode_add_buckets", code, norms, out);
  if (p.memory == Memory::host) {
    const char* who = "qsgd_decode_add_buckets";
    return kernels::qsgd_decode_add_buckets(code.host(who), norms.host(who), bucket, levels, scale,
                                            out.host(who));
  }
  check_qsgd_sizes(out.size(), bucket, levels, code.size(), norms.size());
#ifdef COMMSGD_WITH_CUDA
  cuda::qsgd_decode_add_buckets(code.data(), norms.data(), out.size(), bucket, levels, scale,
                                out.data(), stream_of(p));
#else
  no_cuda("qsgd_decode_add_buckets");
#endif
}

void multiply(Buffer<const float> m, MatrixShape shape, Buffer<const float> q, Buffer<float> p) {
  const Place at = common_place("multiply", m, q, p);
  if (at.memory == Memory::host) {
    return kernels::multiply(m.host("multiply"), shape, q.host("multiply"), p.host("multiply"));
  }
  check_low_rank_sizes(m.size(), p.size(), q.size(), shape);
#ifdef COMMSGD_WITH_CUDA
  cuda::multiply(m.data(), shape, q.data(), p.data(), stream_of(at));
#else
  no_cuda("multiply");
#endif
}

void multiply_transposed(Buffer<const float> m, MatrixShape shape, Buffer<const float> p,
                         Buffer<float> q) {
  const Place at = common_place("multiply_transposed", m, p, q);
  const char* who = "multiply_transposed";
  if (at.memory == Memory::host) {
    return kernels::multiply_transposed(m.host(who), shape, p.host(who), q.host(who));
  }
  check_low_rank_sizes(m.size(), p.size(), q.size(), shape);
#ifdef COMMSGD_WITH_CUDA
  cuda::multiply_transposed(m.data(), shape, p.data(), q.data(), stream_of(at));
#else
  no_cuda(who);
#endif
}

void outer_product(Buffer<const float> p, Buffer<const float> q, MatrixShape shape,
                   Buffer<float> m) {
  const Place at = common_place("outer_product", p, q, m);
  const char* who = "outer_product";
  if (at.memory == Memory::host) {
    return kernels::outer_product(p.host(who), q.host(who), shape, m.host(who));
  }
  check_low_rank_sizes(m.size(), p.size(), q.size(), shape);
#ifdef COMMSGD_WITH_CUDA
  cuda::outer_product(p.data(), q.data(), shape, m.data(), stream_of(at));
#else
  no_cuda(who);
#endif
}

void orthonormalize_columns(Buffer<float> columns, std::size_t length, std::size_t rank) {
  const char* who = "orthonormalize_columns";
  if (columns.on_host()) return kernels::orthonormalize_columns(columns.host(who), length, rank);
  if (columns.size() != length * rank) {
    throw std::invalid_argument("orthonormalize_columns: not rank columns of length entries");
  }
#ifdef COMMSGD_WITH_CUDA
  cuda::orthonormalize_columns(columns.data(), length, rank, stream_of(columns.place()));
#else
  no_cuda(who);
#endif
}

void to_half(Buffer<const float> x, Buffer<std::uint16_t> out, bool bf16) {
  const Place p = common_place("to_half", x, out);
  same_size("to_half", x.size(), out);
  if (p.memory == Memory::host) {
    return bf16 ? to_bf16(x.host("to_half"), out.host("to_half"))
                : to_fp16(x.host("to_half"), out.host("to_half"));
  }
#ifdef COMMSGD_WITH_CUDA
  cuda::to_half(x.data(), out.data(), x.size(), bf16, stream_of(p));
#else
  no_cuda("to_half");
#endif
}

void from_half(Buffer<const std::uint16_t> h, Buffer<float> out, bool bf16) {
  const Place p = common_place("from_half", h, out);
  same_size("from_half", h.size(), out);
  if (p.memory == Memory::host) {
    return bf16 ? from_bf16(h.host("from_half"), out.host("from_half"))
                : from_fp16(h.host("from_half"), out.host("from_half"));
  }
#ifdef COMMSGD_WITH_CUDA
  cuda::from_half(h.data(), out.data(), h.size(), bf16, stream_of(p));
#else
  no_cuda("from_half");
#endif
}

void add_blocks(Buffer<float> x, Buffer<const float> blocks, float share) {
  const Place p = common_place("add_blocks", x, blocks);
  const std::size_t n = x.size();
  if (n == 0 ? !blocks.empty() : blocks.size() % n != 0) {
    throw std::invalid_argument("add_blocks: the blocks are not of the buffer's size");
  }
  if (p.memory == Memory::host) {
    return kernels::add_blocks(x.host("add_blocks"), blocks.host("add_blocks"), share);
  }
#ifdef COMMSGD_WITH_CUDA
  const std::size_t count = n == 0 ? 0 : blocks.size() / n;
  cuda::add_blocks(x.data(), blocks.data(), n, count, share, stream_of(p));
#else
  no_cuda("add_blocks");
#endif
}

void add_difference(Buffer<float> x, Buffer<const float> a, Buffer<const float> b) {
  const Place p = common_place("add_difference", x, a, b);
  same_size("add_difference", x.size(), a, b);
  if (p.memory == Memory::host) {
    return kernels::add_difference(x.host("add_difference"), a.host("add_difference"),
                                   b.host("add_difference"));
  }
#ifdef COMMSGD_WITH_CUDA
  cuda::add_difference(x.data(), a.data(), b.data(), x.size(), stream_of(p));
#else
  no_cuda("add_difference");
#endif
}

double squared_distance(Buffer<const float> a, Buffer<const float> b) {
  const Place p = common_place("squared_distance", a, b);
  same_size("squared_distance", a.size(), b);
  if (p.memory == Memory::host) {
    return kernels::squared_distance(a.host("squared_distance"), b.host("squared_distance"));
  }
#ifdef COMMSGD_WITH_CUDA
  count_bus(sizeof(double));
  return cuda::squared_distance(a.data(), b.data(), a.size(), stream_of(p));
#else
  no_cuda("squared_distance");
#endif
}

void fill_zero(Buffer<float> x) {
  if (x.on_host()) {
    const std::span<float> h = x.host("fill_zero");
    return std::fill(h.begin(), h.end(), 0.0f);
  }
#ifdef COMMSGD_WITH_CUDA
  cuda::check(cudaMemsetAsync(x.data(), 0, x.size() * sizeof(float), stream_of(x.place())),
              "cudaMemsetAsync");
#else
  no_cuda("fill_zero");
#endif
}

void copy_to_host(Buffer<const float> from, std::span<float> to) {
  same_size("copy_to_host", from.size(), to);
  if (from.on_host()) return copy(from, to);
#ifdef COMMSGD_WITH_CUDA
  cuda::check(cudaMemcpyAsync(to.data(), from.data(), to.size_bytes(), cudaMemcpyDeviceToHost,
                              stream_of(from.place())),
              "cudaMemcpyAsync");
  cuda::check(cudaStreamSynchronize(stream_of(from.place())), "cudaStreamSynchronize");
  count_bus(to.size_bytes());
#else
  no_cuda("copy_to_host");
#endif
}

void copy_from_host(std::span<const float> from, Buffer<float> to) {
  same_size("copy_from_host", to.size(), from);
  if (to.on_host()) return copy(from, to);
#ifdef COMMSGD_WITH_CUDA
  cuda::check(cudaMemcpyAsync(to.data(), from.data(), from.size_bytes(), cudaMemcpyHostToDevice,
                              stream_of(to.place())),
              "cudaMemcpyAsync");
  cuda::check(cudaStreamSynchronize(stream_of(to.place())), "cudaStreamSynchronize");
  count_bus(from.size_bytes());
#else
  no_cuda("copy_from_host");
#endif
}

SideStream::SideStream(Memory memory) : place_{memory, nullptr} {
  if (memory == Memory::host) return;
#ifdef COMMSGD_WITH_CUDA
  cuda::check(cudaGetDevice(&device_), "cudaGetDevice");
  cudaStream_t stream = nullptr;
  cuda::check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  place_.stream = stream;
#else
  no_cuda("SideStream");
#endif
}

SideStream::~SideStream() {
#ifdef COMMSGD_WITH_CUDA
  // Work still queued finishes first; the stream's resources are released after it.
  if (place_.stream != nullptr) cuda::discard(cudaStreamDestroy(stream_of(place_)));
#endif
}

void SideStream::enter() const {
  if (place_.memory == Memory::host) return;
#ifdef COMMSGD_WITH_CUDA
  cuda::check(cudaSetDevice(device_), "cudaSetDevice");
#endif
}

StreamPoint::StreamPoint(Memory memory) {
  if (memory == Memory::host) return;
#ifdef COMMSGD_WITH_CUDA
  cudaEvent_t event = nullptr;
  cuda::check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreate");
  event_ = event;
#else
  no_cuda("StreamPoint");
#endif
}

StreamPoint::~StreamPoint() {
#ifdef COMMSGD_WITH_CUDA
  if (event_ != nullptr) cuda::discard(cudaEventDestroy(static_cast<cudaEvent_t>(event_)));
#endif
}

void StreamPoint::record(Place place) {
  if (place.memory == Memory::host) return;
  if (event_ == nullptr) throw std::logic_error("StreamPoint: made for host memory");
#ifdef COMMSGD_WITH_CUDA
  cuda::check(cudaEventRecord(static_cast<cudaEvent_t>(event_), stream_of(place)),
              "cudaEventRecord");
#endif
}

void StreamPoint::wait(Place place) const {
  if (place.memory == Memory::host) return;
  if (event_ == nullptr) throw std::logic_error("StreamPoint: made for host memory");
#ifdef COMMSGD_WITH_CUDA
  // An event never recorded counts as done.
  cuda::check(cudaStreamWaitEvent(stream_of(place), static_cast<cudaEvent_t>(event_)),
              "cudaStreamWaitEvent");
#endif
}

void order_after(Place later, Place earlier) {
  if (later.memory != earlier.memory) {
    throw std::invalid_argument("order_after: places in different kinds of memory");
  }
  if (later.memory == Memory::host || later.stream == earlier.stream) return;
#ifdef COMMSGD_WITH_CUDA
  cuda::order_streams(stream_of(later), stream_of(earlier));
#else
  no_cuda("order_after");
#endif
}

void relocate(Storage<float>& s, Place place) {
  if (s.buffer().place().memory == place.memory) return;
  std::vector<float> values(s.size());
  copy_to_host(s.buffer(), values);
  Storage<float> moved;
  moved.resize(values.size(), place);
  copy_from_host(values, moved.buffer());
  s = std::move(moved);
}

#ifdef COMMSGD_WITH_CUDA
struct SparseStaging::Device {
  cuda::DeviceSparseSet set;
  cuda::DeviceArray<std::uint8_t> applied;
};
#else
struct SparseStaging::Device {};
#endif

SparseStaging::SparseStaging() = default;
SparseStaging::~SparseStaging() = default;

SparseStaging::Device& SparseStaging::device() {
  if (!device_) device_ = std::make_unique<Device>();
  return *device_;
}

void scatter_add(const SparseSet& s, Buffer<float> dense, SparseStaging& staging) {
  if (dense.on_host()) return kernels::scatter_add(s, dense.host("scatter_add"));
#ifdef COMMSGD_WITH_CUDA
  const cudaStream_t stream = stream_of(dense.place());
  cuda::DeviceSparseSet& set = staging.device().set;
  cuda::upload(s, set, stream);
  count_bus(sparse_bytes(s.size()));
  cuda::scatter_add(set, dense.data(), stream);
#else
  (void)staging;
  no_cuda("scatter_add");
#endif
}

void zero_applied(Buffer<float> dense, const SparseSet& s, std::span<const std::uint8_t> applied,
                  SparseStaging& staging) {
  if (dense.on_host()) return kernels::zero_applied(dense.host("zero_applied"), s, applied);
#ifdef COMMSGD_WITH_CUDA
  const cudaStream_t stream = stream_of(dense.place());
  SparseStaging::Device& device = staging.device();
  cuda::upload(s, device.set, stream);
  device.applied.reserve(applied.size(), stream);
  cuda::check(cudaMemcpyAsync(device.applied.data(), applied.data(), applied.size(),
                              cudaMemcpyHostToDevice, stream),
              "cudaMemcpyAsync");
  count_bus(sparse_bytes(s.size()) + applied.size());
  // From pageable memory, the copies have taken the host data when they return: the caller may
  // change the set and the mask at once.
  cuda::zero_applied(dense.data(), device.set, device.applied.data(), stream);
#else
  (void)staging;
  no_cuda("zero_applied");
#endif
}

#ifdef COMMSGD_WITH_CUDA
struct DeviceSelection::State {
  cuda::TopkSelector exact;
  cuda::GaussianSelector gaussian;
  cuda::DgcSelector dgc;
  cuda::RandomSelector random;
  cuda::DeviceSparseSet selected;
};
#else
struct DeviceSelection::State {};
#endif

DeviceSelection::DeviceSelection(SelectionKernel kernel) : kernel_(kernel) {}
DeviceSelection::~DeviceSelection() = default;

void DeviceSelection::select(Buffer<const float> x, std::size_t k, double density,
                             std::uint64_t seed, SparseSet& out) {
#ifdef COMMSGD_WITH_CUDA
  if (x.on_host()) throw std::invalid_argument("DeviceSelection::select: a host buffer");
  if (!state_) state_ = std::make_unique<State>();
  const cudaStream_t stream = stream_of(x.place());
  cuda::DeviceSparseSet& selected = state_->selected;
  switch (kernel_) {
    case SelectionKernel::exact:
      state_->exact.select(x.data(), x.size(), k, selected, stream);
      break;
    case SelectionKernel::gaussian:
      // A threshold's count is not known beforehand: room for every entry, as its host twin.
      selected.reserve(x.size(), stream);
      state_->gaussian.select(x.data(), x.size(), k, density, selected, stream);
      break;
    case SelectionKernel::dgc:
      state_->dgc.select(x.data(), x.size(), k, selected, stream);
      break;
    case SelectionKernel::random:
      state_->random.select(x.data(), x.size(), k, seed, selected, stream);
      break;
  }
  out = cuda::download(selected, stream);
  count_bus(sparse_bytes(out.size()));
#else
  (void)x, (void)k, (void)density, (void)seed, (void)out;
  no_cuda("DeviceSelection::select");
#endif
}

void* allocate(std::size_t bytes, Place place) {
  if (bytes == 0) return nullptr;
  if (place.memory == Memory::host) {
    void* memory = std::malloc(bytes);
    if (memory == nullptr) throw std::bad_alloc();
    return memory;
  }
#ifdef COMMSGD_WITH_CUDA
  void* memory = nullptr;
  cuda::check(cudaMallocAsync(&memory, bytes, stream_of(place)), "cudaMallocAsync");
  return memory;
#else
  no_cuda("allocate");
#endif
}

void release(void* memory, Place place) noexcept {
  if (memory == nullptr) return;
  if (place.memory == Memory::host) return std::free(memory);
#ifdef COMMSGD_WITH_CUDA
  cuda::discard(cudaFreeAsync(memory, stream_of(place)));  // a destructor cannot report it
#endif
}

}  // namespace commsgd::kernels::ops
