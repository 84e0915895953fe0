#include "trainer/gpu_sharing.hpp"

#include <fmt/core.h>

#include <map>

namespace commsgd::trainer {

std::optional<SharedGpu> find_shared_gpu(std::span<const GpuUuid> gpu_of_rank) {
  std::map<GpuUuid, int> first_rank_of;
  for (std::size_t r = 0; r < gpu_of_rank.size(); ++r) {
    const auto [seen, fresh] = first_rank_of.emplace(gpu_of_rank[r], static_cast<int>(r));
    if (!fresh) return SharedGpu{seen->second, static_cast<int>(r)};
  }
  return std::nullopt;
}

DeviceBackendKind device_backend_for(bool gpu_shared, bool link_emulated) {
  return gpu_shared || link_emulated ? DeviceBackendKind::staged : DeviceBackendKind::nccl;
}

std::string gpu_uuid_text(const GpuUuid& u) {
  return fmt::format(
      "GPU-{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-"
      "{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}",
      u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
      u[14], u[15]);
}

}  // namespace commsgd::trainer
