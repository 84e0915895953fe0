#pragma once

// A kernel that keeps a stream busy for a while, so that a test can tell what waits for it.

#include <cuda_runtime_api.h>

#include <chrono>

namespace commsgd::testing {

// Enqueues on `stream` one kernel that runs for about `duration` (the GPU's global timer).
void spin(cudaStream_t stream, std::chrono::milliseconds duration);

}  // namespace commsgd::testing
