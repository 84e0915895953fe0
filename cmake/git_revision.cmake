# Run at every build (cmake -P): writes OUTPUT, a source defining commsgd::git_revision() as
# `git describe --always --dirty --abbrev=12` of SOURCE_DIR says now, "unknown" outside a git
# checkout. The file is rewritten only when the revision changed, so an unchanged tree rebuilds
# nothing, and a commit or an edit since the last build relinks the programs with the new name.
execute_process(COMMAND git describe --always --dirty --abbrev=12
                WORKING_DIRECTORY "${SOURCE_DIR}"
                OUTPUT_VARIABLE revision OUTPUT_STRIP_TRAILING_WHITESPACE
                ERROR_QUIET)
if(NOT revision)
  set(revision "unknown")
endif()
string(CONCAT text
  "// Written at build time by cmake/git_revision.cmake.\n"
  "#include \"trainer/git_revision.hpp\"\n\n"
  "const char* commsgd::git_revision() { return \"${revision}\"; }\n")
set(old "")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
endif()
if(NOT "${old}" STREQUAL "${text}")
  file(WRITE "${OUTPUT}" "${text}")
endif()
