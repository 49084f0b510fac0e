# Read by ctest before it runs any test (TEST_INCLUDE_FILES of tests/): the
# environment every test of the suite inherits. A value the caller already
# set is kept.

# As root, an embedded PostgreSQL runs as $FABTRACK_PG_USER, else as the
# 'fabtrack' user if there is one, else as 'postgres'. package_deb creates
# the 'fabtrack' user for the time its package is installed; a server that
# another test starts meanwhile would then run as that user, who cannot read
# the test's temp dirs. Pinning the choice made when the suite starts lets
# package_deb run beside the other tests (it unsets this for its own check
# that the installed package's server runs as 'fabtrack').
if("$ENV{FABTRACK_PG_USER}" STREQUAL "")
  execute_process(COMMAND id -u OUTPUT_VARIABLE fabtrack_uid OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(fabtrack_uid STREQUAL "0")
    foreach(fabtrack_pg_user fabtrack postgres)
      execute_process(COMMAND getent passwd ${fabtrack_pg_user} RESULT_VARIABLE fabtrack_absent
                      OUTPUT_QUIET ERROR_QUIET)
      if(fabtrack_absent EQUAL 0)
        set(ENV{FABTRACK_PG_USER} ${fabtrack_pg_user})
        break()
      endif()
    endforeach()
  endif()
endif()
