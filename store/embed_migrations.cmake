# Generates a C++ source holding every schema/NNN_name.sql as a string, so the
# binary knows its migrations without reading files at run time.
# Invoked with -DSCHEMA_DIR=... -DOUTPUT=...
file(GLOB sql_files "${SCHEMA_DIR}/[0-9][0-9][0-9]_*.sql")
list(SORT sql_files)
set(body "")
foreach(path IN LISTS sql_files)
  get_filename_component(fname "${path}" NAME_WE)
  string(SUBSTRING "${fname}" 0 3 version)
  string(REGEX REPLACE "^0+" "" version "${version}")
  string(SUBSTRING "${fname}" 4 -1 name)
  file(READ "${path}" sql)
  string(APPEND body "    {${version}, \"${name}\", R\"fabtrack_sql(${sql})fabtrack_sql\"},\n")
endforeach()
file(WRITE "${OUTPUT}.tmp" "// Generated from schema/*.sql by store/embed_migrations.cmake. Do not edit.
#include \"store/migrations.h\"

namespace fabtrack::store {

const std::vector<Migration>& EmbeddedMigrations() {
  static const std::vector<Migration> migrations = {
${body}  };
  return migrations;
}

}  // namespace fabtrack::store
")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different "${OUTPUT}.tmp" "${OUTPUT}")
