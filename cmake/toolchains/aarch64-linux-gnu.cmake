# Cross-compiling commsgd's LibTorch-free part for 64-bit ARM (Grace Hopper, Graviton, Ampere)
# with Debian's cross toolchain (g++-aarch64-linux-gnu), its tests run under qemu-user
# (qemu-user-static). scripts/aarch64-check.sh downloads the ARM libraries it links (Open MPI,
# SQLite, zlib) into COMMSGD_AARCH64_ROOT and drives the whole build.
#
#   cmake -S . -B build/aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake \
#         -DCOMMSGD_AARCH64_ROOT=DIR -DCOMMSGD_BUILD_TRAINER=OFF -DCOMMSGD_CUDA=OFF
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

# try_compile projects see only the variables listed here.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES COMMSGD_AARCH64_ROOT)
if(NOT COMMSGD_AARCH64_ROOT)
  message(FATAL_ERROR "aarch64: set COMMSGD_AARCH64_ROOT to the unpacked ARM libraries "
                      "(scripts/aarch64-check.sh makes it)")
endif()
set(multiarch "${COMMSGD_AARCH64_ROOT}/usr/lib/aarch64-linux-gnu")
set(multiarch_lib "${COMMSGD_AARCH64_ROOT}/lib/aarch64-linux-gnu")  # zlib's, outside /usr

# Libraries and headers from the unpacked ARM packages and the toolchain's own, never the
# build machine's; programs (git, python) from the build machine.
set(CMAKE_FIND_ROOT_PATH "${COMMSGD_AARCH64_ROOT}" /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# Debian's multiarch headers (libjpeg's jconfig.h), which the cross compiler does not search in
# the unpacked packages.
set(CMAKE_C_STANDARD_INCLUDE_DIRECTORIES "${COMMSGD_AARCH64_ROOT}/usr/include/aarch64-linux-gnu")
set(CMAKE_CXX_STANDARD_INCLUDE_DIRECTORIES "${COMMSGD_AARCH64_ROOT}/usr/include/aarch64-linux-gnu")

# Open MPI without its compiler wrapper (the build machine's mpicxx names x86-64 paths): its
# headers and library where Debian's libopenmpi-dev puts them. commsgd calls MPI's C API only, so
# the C++ bindings (libmpi_cxx) are left out.
set(MPI_CXX_COMPILER "${CMAKE_CXX_COMPILER}")
set(MPI_CXX_ADDITIONAL_INCLUDE_DIRS "${multiarch}/openmpi/include")
set(MPI_CXX_LIB_NAMES mpi)
set(MPI_mpi_LIBRARY "${multiarch}/openmpi/lib/libmpi.so")
set(MPI_CXX_SKIP_MPICXX ON)

# The ARM libraries' own dependencies, found when linking as the ARM loader would find them.
set(CMAKE_EXE_LINKER_FLAGS_INIT "-Wl,-rpath-link,${multiarch}:${multiarch_lib}")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-Wl,-rpath-link,${multiarch}:${multiarch_lib}")

# Tests (and gtest_discover_tests at build time) run the ARM programs under qemu-user, with the
# unpacked packages (the C library among them) as the root they see: their own library paths,
# Open MPI's plugins where it looks for them.
find_program(COMMSGD_QEMU_AARCH64 NAMES qemu-aarch64-static qemu-aarch64 REQUIRED)
set(CMAKE_CROSSCOMPILING_EMULATOR "${COMMSGD_QEMU_AARCH64};-L;${COMMSGD_AARCH64_ROOT}")
