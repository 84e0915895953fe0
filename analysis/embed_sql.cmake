# Embeds a text file (the SQL schema, results/papers.toml) into a C++ header as a
# std::string_view constant.
#
#   cmake -DINPUT=analysis/schema.sql -DOUTPUT=<gen>/commsgd/record/schema_sql.hpp \
#         -DNAME=kSchemaSql [-DNAMESPACE=commsgd::record] -P analysis/embed_sql.cmake
#
# The header is only rewritten when its content changes, so touching the input without changing
# it (or re-running the build) does not recompile everything that includes the header.

foreach(var INPUT OUTPUT NAME)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "embed_sql.cmake: -D${var}=... is required")
  endif()
endforeach()
if(NOT DEFINED NAMESPACE)
  set(NAMESPACE "commsgd::record")
endif()

file(READ "${INPUT}" body)

# The text goes into a raw string literal; it must not contain the literal's terminator.
string(FIND "${body}" ")sql\"" terminator)
if(NOT terminator EQUAL -1)
  message(FATAL_ERROR "embed_sql.cmake: ${INPUT} contains ')sql\"', which would end the raw string")
endif()

set(header "// Generated from ${INPUT} by embed_sql.cmake. Do not edit.
#pragma once

#include <string_view>

namespace ${NAMESPACE} {

inline constexpr std::string_view ${NAME} = R\"sql(${body})sql\";

}  // namespace ${NAMESPACE}
")

if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
  if(old STREQUAL header)
    return()
  endif()
endif()
file(WRITE "${OUTPUT}" "${header}")
