# cmake --install BUILD --prefix DIR: the programs in bin/; what they ship with in share/commsgd/
# (job templates, network profiles and the cluster in a box, the configs, the report's plot
# script, the example), found from where the programs run (common/installed_paths.hpp), so the
# tree can move; and a CMake package for algorithms of one's own (cmake/commsgdConfig.cmake.in).
# Nothing here needs root: the prefix is any directory.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(installed_libraries
    commsgd_warnings commsgd_kernels commsgd_ops commsgd_algorithms commsgd_record)
set(COMMSGD_INSTALLED_CUDA OFF)
set(COMMSGD_INSTALLED_NCCL OFF)
if(TARGET commsgd_kernels_cuda)
  list(APPEND installed_libraries commsgd_kernels_cuda commsgd_device_comm)
  set(COMMSGD_INSTALLED_CUDA ON)
  get_target_property(device_definitions commsgd_device_comm INTERFACE_COMPILE_DEFINITIONS)
  if("COMMSGD_WITH_NCCL" IN_LIST device_definitions)
    set(COMMSGD_INSTALLED_NCCL ON)
  endif()
endif()
if(COMMSGD_BUILD_TRAINER)
  list(APPEND installed_libraries commsgd_trainer_core commsgd_trainer)
endif()
foreach(library IN LISTS installed_libraries)
  string(REGEX REPLACE "^commsgd_" "" exported "${library}")
  set_target_properties(${library} PROPERTIES EXPORT_NAME ${exported})
  # The headers are C++20: a project that links commsgd compiles as C++20 at least.
  target_compile_features(${library} INTERFACE cxx_std_20)
endforeach()
install(TARGETS ${installed_libraries} EXPORT commsgdTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
# Headers at the paths the sources include them by ("algorithms/catalog.hpp").
install(DIRECTORY algorithms kernels trainer DESTINATION include/commsgd
        FILES_MATCHING PATTERN "*.hpp" PATTERN "*.cuh")
install(DIRECTORY analysis/record DESTINATION include/commsgd/analysis
        FILES_MATCHING PATTERN "*.hpp" PATTERN statement.hpp EXCLUDE)  # the library's own

set(package_dir ${CMAKE_INSTALL_LIBDIR}/cmake/commsgd)
install(EXPORT commsgdTargets NAMESPACE commsgd:: DESTINATION ${package_dir})
configure_package_config_file(cmake/commsgdConfig.cmake.in
  "${PROJECT_BINARY_DIR}/commsgdConfig.cmake" INSTALL_DESTINATION ${package_dir})
write_basic_package_version_file("${PROJECT_BINARY_DIR}/commsgdConfigVersion.cmake"
  COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/commsgdConfig.cmake"
              "${PROJECT_BINARY_DIR}/commsgdConfigVersion.cmake" cmake/FindNCCL.cmake
        DESTINATION ${package_dir})

install(DIRECTORY jobs/ DESTINATION ${CMAKE_INSTALL_DATADIR}/commsgd/jobs USE_SOURCE_PERMISSIONS
        PATTERN sweep EXCLUDE)
install(DIRECTORY configs examples DESTINATION ${CMAKE_INSTALL_DATADIR}/commsgd)
install(FILES analysis/plot.py DESTINATION ${CMAKE_INSTALL_DATADIR}/commsgd)
