# The small libraries commsgd builds on: the site's own where CMake finds them (an installed
# package, CMAKE_PREFIX_PATH, a module), else a pinned release that CMake fetches and builds with
# the project. MPI, LibTorch, SQLite, zlib, libjpeg and CUDA are always the site's (find_package).
#
#   -DCOMMSGD_FETCH_MISSING=OFF         an air-gapped site: find_package only, which names what
#                                       is missing
#   -DFETCHCONTENT_SOURCE_DIR_FMT=DIR   (and _CLI11, _NLOHMANN_JSON, _TOMLPLUSPLUS, _GTEST) build
#                                       a local copy of the release instead of downloading it
#
# Each pin is the release's tag and the commit that tag names upstream (a tag can move, a commit
# cannot); tests/cmake/fetched_dependencies.sh builds the project with all five hidden from CMake.
option(COMMSGD_FETCH_MISSING
       "Fetch CLI11, fmt, nlohmann_json, toml++ and GoogleTest when CMake does not find them" ON)

include(FetchContent)
include(GNUInstallDirs)
# The fetched projects' options below are plain variables; projects older than CMake 3.13's
# policy would ignore them.
set(CMAKE_POLICY_DEFAULT_CMP0077 NEW)

# commsgd_dependency(NAME RELEASE REPOSITORY COMMIT [find_package arguments...])
macro(commsgd_dependency name release repository commit)
  if(COMMSGD_FETCH_MISSING)
    # SYSTEM: the fetched headers are not held to commsgd's warnings, as installed ones are not.
    FetchContent_Declare(${name} GIT_REPOSITORY ${repository} GIT_TAG ${commit} SYSTEM
                         FIND_PACKAGE_ARGS ${ARGN})
    FetchContent_MakeAvailable(${name})
    string(TOLOWER ${name} lower_name)
    if(${lower_name}_SOURCE_DIR)
      message(STATUS "${name}: not installed; built from release ${release} (${commit})")
    endif()
  else()
    find_package(${name} ${ARGN} REQUIRED)
  endif()
endmacro()

# What a fetched library installs with commsgd, so that an installed commsgd's CMake package
# finds it (commsgdConfig.cmake's find_dependency) in the same prefix.
set(FMT_INSTALL ON)
set(JSON_Install ON)
set(INSTALL_GTEST OFF)
set(BUILD_GMOCK OFF)

commsgd_dependency(fmt 9.1.0 https://github.com/fmtlib/fmt.git
                   a33701196adfad74917046096bf5a2aa0ab0bb50)
commsgd_dependency(nlohmann_json 3.11.2 https://github.com/nlohmann/json.git
                   bc889afb4c5bf1c0d8ee29ef35eaaf4c8bef8a5d)
commsgd_dependency(CLI11 2.1.2 https://github.com/CLIUtils/CLI11.git
                   70f8072f9dd2292fd0b9f9e5f58e279f60483ed3 CONFIG)
commsgd_dependency(tomlplusplus 3.3.0 https://github.com/marzer/tomlplusplus.git
                   c635f218c0aefc801d9748841930365e54fe3089)
if(COMMSGD_BUILD_TESTS)
  commsgd_dependency(GTest 1.12.1 https://github.com/google/googletest.git
                     58d77fa8070e8cec2dc1ed015d66b454c8d78850)
endif()

# CLI11 installs itself only as the top-level project: a fetched one is installed here, as its
# own install rules would (the headers, and a CLI11Config.cmake with the CLI11::CLI11 target).
if(cli11_SOURCE_DIR)
  install(DIRECTORY "${cli11_SOURCE_DIR}/include/" DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(TARGETS CLI11 EXPORT CLI11Targets)
  install(EXPORT CLI11Targets FILE CLI11Config.cmake NAMESPACE CLI11::
          DESTINATION ${CMAKE_INSTALL_DATADIR}/cmake/CLI11)
endif()
