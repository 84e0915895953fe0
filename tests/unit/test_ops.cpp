// Buffers and the operations on them (kernels/buffer.hpp, kernels/ops.hpp), for host buffers:
// each operation gives what the host kernel it dispatches to gives, and operands in different
// places are refused. The CUDA half is compared with these in test_cuda_kernels.
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "kernels/half_precision.hpp"
#include "kernels/ops.hpp"
#include "kernels/sgd.hpp"
#include "kernels/vector_ops.hpp"

namespace commsgd::kernels {
namespace {

std::vector<float> ramp(std::size_t n, float start, float step) {
  std::vector<float> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = start + step * static_cast<float>(i);
  return x;
}

TEST(Buffers, HostContainersAreHostBuffers) {
  std::vector<float> x(5);
  const Buffer<float> b = x;
  EXPECT_EQ(b.data(), x.data());
  EXPECT_EQ(b.size(), 5u);
  EXPECT_TRUE(b.on_host());
  const Buffer<const float> c = b;
  EXPECT_EQ(c.place(), kHost);
  EXPECT_EQ(b.subspan(1, 3).data(), x.data() + 1);
  EXPECT_THROW((void)b.subspan(3, 3), std::out_of_range);
}

TEST(Buffers, ADeviceBufferHasNoHostView) {
  float x = 0;
  const Buffer<float> b(&x, 1, cuda_place(nullptr));
  EXPECT_THROW((void)b.host("the test"), std::logic_error);
  EXPECT_EQ(b.subspan(0, 1).place(), b.place());
}

TEST(Buffers, OnChangesTheStreamNotTheMemory) {
  float x[3] = {};
  const Buffer<float> device(x, 3, cuda_place(nullptr));
  int stream = 0;
  const Buffer<float> elsewhere = device.on(cuda_place(&stream));
  EXPECT_EQ(elsewhere.data(), x);
  EXPECT_EQ(elsewhere.size(), 3u);
  EXPECT_EQ(elsewhere.place().stream, &stream);
  EXPECT_THROW((void)device.on(kHost), std::invalid_argument);
  EXPECT_THROW((void)Buffer<float>(x, 3, kHost).on(cuda_place(nullptr)), std::invalid_argument);
}

TEST(Ops, HostOperationsAreTheHostKernels) {
  const std::vector<float> g = ramp(1001, -3.0f, 0.007f);
  std::vector<float> acc = ramp(1001, 1.0f, -0.003f), expected = acc;
  ops::add(acc, g);
  for (std::size_t i = 0; i < g.size(); ++i) expected[i] += g[i];
  EXPECT_EQ(acc, expected);

  ops::scale(acc, 0.37f);
  scale(expected, 0.37f);
  EXPECT_EQ(acc, expected);
  EXPECT_EQ(ops::squared_norm(acc), squared_norm(expected));

  std::vector<float> copied(acc.size());
  ops::copy(acc, copied);
  EXPECT_EQ(copied, acc);

  // Large minus large: the difference is exact, the sum of the three in another order is not.
  std::vector<float> x(3, 1.0f), a(3, 1e8f), b(3, 1e8f - 8.0f);
  ops::add_difference(x, a, b);
  EXPECT_EQ(x, std::vector<float>(3, 9.0f));

  std::vector<float> p = ramp(1001, 0.5f, 0.001f), q = p, m(p.size(), 0.0f), n = m;
  const SgdHyperParams hp{0.1f, 0.9f, 1e-4f, true};
  for (int step = 0; step < 3; ++step) {
    ops::sgd_step(p, g, m, hp);
    sgd_step(q, g, n, hp);
  }
  EXPECT_EQ(p, q);
  EXPECT_EQ(m, n);

  for (const bool bf16 : {false, true}) {
    std::vector<std::uint16_t> bits(g.size()), want(g.size());
    ops::to_half(g, bits, bf16);
    bf16 ? to_bf16(g, want) : to_fp16(g, want);
    EXPECT_EQ(bits, want);
    std::vector<float> back(g.size()), want_back(g.size());
    ops::from_half(bits, back, bf16);
    bf16 ? from_bf16(want, want_back) : from_fp16(want, want_back);
    EXPECT_EQ(back, want_back);
  }
}

TEST(Ops, OperandsMustShareAPlaceAndASize) {
  std::vector<float> host(4), other(4), shorter(3);
  const Buffer<const float> device(other.data(), other.size(), cuda_place(nullptr));
  EXPECT_THROW(ops::add(host, device), std::invalid_argument);
  EXPECT_THROW(ops::copy(device, host), std::invalid_argument);
  EXPECT_THROW(ops::add(host, shorter), std::invalid_argument);
  EXPECT_THROW(ops::copy(shorter, host), std::invalid_argument);
}

TEST(Ops, WithoutCudaADeviceBufferIsRefused) {
  if (ops::cuda_built()) GTEST_SKIP() << "built with CUDA: test_cuda_kernels covers device buffers";
  std::vector<float> x(4);
  const Buffer<float> device(x.data(), x.size(), cuda_place(nullptr));
  EXPECT_THROW(ops::scale(device, 2.0f), std::logic_error);
  ops::Storage<float> storage;
  EXPECT_THROW(storage.resize(4, cuda_place(nullptr)), std::logic_error);
}

// A side stream and stream points on the host order nothing: host calls return done.
TEST(Ops, StreamsOnTheHostAreNoOps) {
  const ops::SideStream side(Memory::host);
  EXPECT_EQ(side.place(), kHost);
  side.enter();
  ops::StreamPoint point(Memory::host);
  point.record(kHost);
  point.wait(side.place());
  ops::order_after(side.place(), kHost);
  EXPECT_THROW(ops::order_after(kHost, cuda_place(nullptr)), std::invalid_argument);
}

TEST(Ops, RelocatingWithinHostMemoryKeepsTheStorage) {
  ops::Storage<float> s;
  s.resize(4, kHost);
  std::iota(s.buffer().data(), s.buffer().data() + 4, 1.0f);
  const float* before = s.buffer().data();
  ops::relocate(s, kHost);
  EXPECT_EQ(s.buffer().data(), before);
  EXPECT_EQ(s.buffer().data()[3], 4.0f);
}

TEST(Ops, HostStorageGrowsAndKeepsItsPlace) {
  ops::Storage<float> s;
  s.resize(10, kHost);
  EXPECT_EQ(s.buffer().size(), 10u);
  EXPECT_TRUE(s.buffer().on_host());
  float* first = s.buffer().data();
  s.resize(5, kHost);
  EXPECT_EQ(s.buffer().data(), first) << "shrinking keeps the memory";
  std::iota(s.buffer().data(), s.buffer().data() + 5, 1.0f);
  ops::Storage<float> moved = std::move(s);
  EXPECT_EQ(moved.buffer().data()[4], 5.0f);
  EXPECT_EQ(moved.size(), 5u);
}

}  // namespace
}  // namespace commsgd::kernels
