#include "kernels/ops.hpp"

#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

#include "kernels/half_precision.hpp"
#include "kernels/sparse_ops.hpp"
#include "kernels/vector_ops.hpp"

#ifdef COMMSGD_WITH_CUDA
#include <cuda_runtime_api.h>

#include "kernels/cuda/device_array.hpp"
#include "kernels/cuda/vector_ops.hpp"
#endif

namespace commsgd::kernels::ops {
namespace {

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
  cudaFreeAsync(memory, stream_of(place));  // a destructor cannot report a failed free
#endif
}

}  // namespace commsgd::kernels::ops
