# FindNCCL: NCCL's header and library, wherever a GPU node keeps them. Looked for, in order:
#   NCCL_ROOT, NCCL_HOME or NCCL_DIR (a CMake variable or an environment variable): a prefix with
#     include/nccl.h and lib/ (a module's or Spack's install, an unpacked NVIDIA archive);
#   CMAKE_PREFIX_PATH (conda's prefix, say);
#   the nvidia-nccl-cu* wheel of the Python that has PyTorch (Python3_EXECUTABLE, else python3 on
#     the PATH): site-packages/nvidia/nccl/{include,lib}, which pip's PyTorch loads its NCCL from;
#   the CUDA toolkit's folders (CUDAToolkit_INCLUDE_DIRS, CUDAToolkit_LIBRARY_DIR);
#   the system's paths (Debian's libnccl-dev).
# A wheel has only the versioned libnccl.so.2, no libnccl.so: both names are accepted.
#
# Sets NCCL_FOUND, NCCL_VERSION (from nccl.h), NCCL_INCLUDE_DIR, NCCL_LIBRARY, and the imported
# target NCCL::nccl (global: the tests link it too).
include(FindPackageHandleStandardArgs)

set(_nccl_hints)
foreach(_var NCCL_ROOT NCCL_HOME NCCL_DIR)
  if(${_var})
    list(APPEND _nccl_hints "${${_var}}")
  elseif(DEFINED ENV{${_var}})
    list(APPEND _nccl_hints "$ENV{${_var}}")
  endif()
endforeach()

set(_nccl_python "${Python3_EXECUTABLE}")
if(NOT _nccl_python)
  find_program(_nccl_python NAMES python3 python)
endif()
if(_nccl_python)
  execute_process(
    COMMAND "${_nccl_python}" -c "import nvidia.nccl; print(list(nvidia.nccl.__path__)[0])"
    OUTPUT_VARIABLE _nccl_wheel OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET
    RESULT_VARIABLE _nccl_wheel_status)
  if(_nccl_wheel_status EQUAL 0 AND IS_DIRECTORY "${_nccl_wheel}")
    list(APPEND _nccl_hints "${_nccl_wheel}")
  endif()
endif()

find_path(NCCL_INCLUDE_DIR nccl.h
  HINTS ${_nccl_hints} ${CUDAToolkit_INCLUDE_DIRS}
  PATH_SUFFIXES include)
# The library of the header's own installation first: a header and a library of two NCCL
# versions would build and then fail at run time.
set(_nccl_library_names nccl libnccl.so.2)
set(_nccl_library_suffixes lib lib64 lib/${CMAKE_LIBRARY_ARCHITECTURE})
if(NCCL_INCLUDE_DIR)
  get_filename_component(_nccl_prefix "${NCCL_INCLUDE_DIR}" DIRECTORY)
  find_library(NCCL_LIBRARY NAMES ${_nccl_library_names}
    PATHS "${_nccl_prefix}" PATH_SUFFIXES ${_nccl_library_suffixes} NO_DEFAULT_PATH)
endif()
find_library(NCCL_LIBRARY NAMES ${_nccl_library_names}
  HINTS ${_nccl_hints} ${CUDAToolkit_LIBRARY_DIR}
  PATH_SUFFIXES ${_nccl_library_suffixes})
if(NCCL_INCLUDE_DIR AND NCCL_LIBRARY AND _nccl_prefix)
  cmake_path(IS_PREFIX _nccl_prefix "${NCCL_LIBRARY}" NORMALIZE _nccl_together)
  if(NOT _nccl_together AND NOT NCCL_FIND_QUIETLY)
    message(WARNING "NCCL's header (${NCCL_INCLUDE_DIR}) and library (${NCCL_LIBRARY}) come from "
                    "two installations, which may be two versions; set NCCL_ROOT to one")
  endif()
endif()

if(NCCL_INCLUDE_DIR AND EXISTS "${NCCL_INCLUDE_DIR}/nccl.h")
  file(STRINGS "${NCCL_INCLUDE_DIR}/nccl.h" _nccl_defines
       REGEX "^#define NCCL_(MAJOR|MINOR|PATCH) +[0-9]+")
  foreach(_part MAJOR MINOR PATCH)
    string(REGEX REPLACE ".*#define NCCL_${_part} +([0-9]+).*" "\\1" _nccl_${_part}
           "${_nccl_defines}")
  endforeach()
  set(NCCL_VERSION "${_nccl_MAJOR}.${_nccl_MINOR}.${_nccl_PATCH}")
endif()

find_package_handle_standard_args(NCCL
  REQUIRED_VARS NCCL_LIBRARY NCCL_INCLUDE_DIR
  VERSION_VAR NCCL_VERSION)

if(NCCL_FOUND AND NOT TARGET NCCL::nccl)
  add_library(NCCL::nccl UNKNOWN IMPORTED GLOBAL)
  set_target_properties(NCCL::nccl PROPERTIES
    IMPORTED_LOCATION "${NCCL_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${NCCL_INCLUDE_DIR}")
endif()
mark_as_advanced(NCCL_INCLUDE_DIR NCCL_LIBRARY)
