#include "algorithms/comm/mpi_library.hpp"

#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // Open MPI's extensions: MPIX_CUDA_AWARE_SUPPORT
#endif

namespace commsgd::comm {
namespace {

// Open MPI says at compile time whether it was built with CUDA support and at run time whether
// that support is on; other libraries do not say through a standard interface.
std::string cuda_awareness() {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1 ? "yes" : "no (built with CUDA support, off at run time)";
#elif defined(MPIX_CUDA_AWARE_SUPPORT)
  return "no (the library was built without CUDA support)";
#else
  return "unknown (the library does not say)";
#endif
}

}  // namespace

MpiLibrary mpi_library() {
  MpiLibrary library;
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(text, &length);
  library.version = text;  // up to its NUL, which some libraries count in `length`
  library.version = library.version.substr(0, library.version.find('\n'));
  library.version.erase(library.version.find_last_not_of(" \t\r") + 1);
  int major = 0, minor = 0;
  MPI_Get_version(&major, &minor);
  library.standard = std::to_string(major) + "." + std::to_string(minor);
  library.cuda_aware = cuda_awareness();
  return library;
}

}  // namespace commsgd::comm
