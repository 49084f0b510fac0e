# What `cmake --install` lays out and the Debian package built from it
# (`cpack -G DEB` in the build folder; tests/package/package_deb_test.sh
# installs it with apt, runs it and removes it). The binaries' own install()
# rules are beside their targets; this file adds everything else a host
# needs: schema migrations, dashboards and alert rules, the nightly job,
# systemd units, the man page, and the package's metadata.
include(GNUInstallDirs)
# `cmake --install` and cpack take what the build made instead of first
# checking every one of ~300 targets (Makefiles: minutes on 2 cores): build
# first (scripts/test.sh and the package test do).
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)
set(fabtrack_share_dir ${CMAKE_INSTALL_DATADIR}/fabtrack)
set(fabtrack_package_dir ${PROJECT_BINARY_DIR}/packaging)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/schema/ DESTINATION ${fabtrack_share_dir}/schema
        FILES_MATCHING PATTERN "*.sql")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/dashboards/ DESTINATION ${fabtrack_share_dir}/dashboards)
install(PROGRAMS ${PROJECT_SOURCE_DIR}/scripts/nightly/fabtrack-nightly-cron.sh
                 ${PROJECT_SOURCE_DIR}/scripts/nightly/fabtrack-nightly.sbatch
        DESTINATION ${fabtrack_share_dir}/nightly)
install(FILES ${PROJECT_SOURCE_DIR}/scripts/nightly/lib.sh DESTINATION ${fabtrack_share_dir}/nightly)
# Slurm hooks: the prolog/epilog node check and the RAS watchdog of a job.
install(PROGRAMS ${PROJECT_SOURCE_DIR}/scripts/slurm/fabtrack-node-check.sh
                 ${PROJECT_SOURCE_DIR}/scripts/slurm/fabtrack-ras-watchdog.sh
        DESTINATION ${fabtrack_share_dir}/slurm)
install(FILES ${PROJECT_SOURCE_DIR}/scripts/slurm/hook-conf.sh DESTINATION ${fabtrack_share_dir}/slurm)

# The examples with the package's paths (/usr/bin, /usr/share/fabtrack)
# instead of the Ansible prefix /opt/fabtrack.
foreach(example fabtrack-nightly.conf.example crontab.example scrontab.example)
  file(READ ${PROJECT_SOURCE_DIR}/scripts/nightly/${example} text)
  string(REPLACE "/opt/fabtrack/bin/" "/usr/bin/" text "${text}")
  string(REPLACE "/opt/fabtrack/share/" "/usr/share/fabtrack/" text "${text}")
  string(REPLACE ".example" "" name ${example})
  string(REPLACE "fabtrack-nightly.conf" "nightly.conf" name ${name})
  file(WRITE ${fabtrack_package_dir}/examples/${name} "${text}")
endforeach()
install(DIRECTORY ${fabtrack_package_dir}/examples/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/ARCHITECTURE.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR})

# systemd looks in /usr/lib/systemd/system (Debian 12 has a merged /usr).
install(FILES ${PROJECT_SOURCE_DIR}/packaging/systemd/fabtrack-exporter.service
              ${PROJECT_SOURCE_DIR}/packaging/systemd/fabtrack-db.service
              ${PROJECT_SOURCE_DIR}/packaging/systemd/fabtrack-nightly.service
              ${PROJECT_SOURCE_DIR}/packaging/systemd/fabtrack-nightly.timer
        DESTINATION lib/systemd/system)

# fabtrack(1) from the binary's own --help texts.
set(fabtrack_manpage ${fabtrack_package_dir}/fabtrack.1.gz)
add_custom_command(
  OUTPUT ${fabtrack_manpage}
  COMMAND ${PROJECT_SOURCE_DIR}/packaging/make-manpage.sh $<TARGET_FILE:fabtrack>
          ${fabtrack_package_dir}/fabtrack.1 ${PROJECT_VERSION}
  COMMAND gzip -9nf ${fabtrack_package_dir}/fabtrack.1
  DEPENDS fabtrack ${PROJECT_SOURCE_DIR}/packaging/make-manpage.sh
  COMMENT "Writing the man page fabtrack(1)")
add_custom_target(fabtrack_manpage ALL DEPENDS ${fabtrack_manpage})
install(FILES ${fabtrack_manpage} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME fabtrack)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "fabtrack maintainers <fabtrack@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "GPU cluster fabric monitor: all-reduce sweeps, NCCL transports, RDMA port counters")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "fabtrack runs all-reduce sweeps across node counts every night, reads NCCL's\n\
transports and the InfiniBand/RoCE port counters of the same window, stores them\n\
in PostgreSQL and judges each night against the history: latency jitter,\n\
fallbacks to sockets, scaling and bandwidth regressions, port errors. Results\n\
reach Grafana, Prometheus alerts and reports.")
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
# Library dependencies from the binaries themselves (dpkg-shlibdeps); the
# embedded database runs the PostgreSQL 15 server binaries it was built for.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "adduser, postgresql-15")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "openmpi-bin, infiniband-diags")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${PROJECT_SOURCE_DIR}/packaging/debian/postinst ${PROJECT_SOURCE_DIR}/packaging/debian/prerm
    ${PROJECT_SOURCE_DIR}/packaging/debian/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
