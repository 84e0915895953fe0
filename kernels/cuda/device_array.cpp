#include "kernels/cuda/device_array.hpp"

#include <stdexcept>
#include <string>

namespace commsgd::kernels::cuda {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
  }
}

void check_launch(const char* what) {
  check(cudaGetLastError(), what);
}

}  // namespace commsgd::kernels::cuda
