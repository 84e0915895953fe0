// Which MPI library this process runs on: what commsgd-train --version tells a user before a
// multi-node job, since a job launched with another MPI than the one built against fails in ways
// that do not say so.
#pragma once

#include <string>

namespace commsgd::comm {

struct MpiLibrary {
  std::string version;     // MPI_Get_library_version's first line, e.g. "Open MPI v4.1.4, ..."
  std::string standard;    // the MPI standard it implements, e.g. "3.1"
  std::string cuda_aware;  // "yes", "no (...)" or "unknown (...)": whether it takes device memory
};

// Callable before MPI_Init and after MPI_Finalize, as the standard allows these queries.
MpiLibrary mpi_library();

}  // namespace commsgd::comm
