#!/usr/bin/env bash
# The Debian package for real (issue 33): cpack builds it from this build
# folder, apt installs it, the installed fabtrack runs end to end (embedded
# database, ingest, analyze) as the package's fabtrack user would set it up,
# systemd-analyze verifies its units, and apt removes and purges it without
# leaving a file behind. Needs root and apt; every package step is undone on
# exit, and a fabtrack user the package created is removed again.
set -euo pipefail
src=$1 build=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
# The suite pins the embedded server's user for the other tests (see
# tests/support/suite_environment.cmake); this test checks the installed
# package's own choice, its fabtrack user.
unset FABTRACK_PG_USER
[[ $(id -u) -eq 0 ]] || fail "needs root (apt install)"
if dpkg -s fabtrack >/dev/null 2>&1; then fail "a fabtrack package is already installed here"; fi
user_before=0
getent passwd fabtrack >/dev/null && user_before=1
etc_before=0
[[ -e /etc/fabtrack ]] && etc_before=1
work=$(mktemp -d)
chmod 755 "$work"
cleanup() {
  FABTRACK_DATA_DIR=$work/pg /usr/bin/fabtrack db stop >/dev/null 2>&1 || true
  if dpkg -s fabtrack >/dev/null 2>&1; then apt-get purge -y -q fabtrack >/dev/null 2>&1 || true; fi
  if ((user_before == 0)) && getent passwd fabtrack >/dev/null; then
    userdel fabtrack || echo "package_deb: could not remove the fabtrack user it created" >&2
    if getent group fabtrack >/dev/null; then groupdel fabtrack || true; fi
  fi
  rm -rf "$work" /var/lib/fabtrack
}
trap cleanup EXIT

# Build: metadata from the binaries.
(cd "$build" && cpack -G DEB -B "$work/out" >"$work/cpack.log" 2>&1) ||
  { cat "$work/cpack.log"; fail "cpack failed"; }
deb=$(ls "$work"/out/fabtrack_*_amd64.deb)
control=$(dpkg-deb -f "$deb")
grep -q '^Depends:.*postgresql-15' <<<"$control" || fail "no PostgreSQL dependency: $control"
grep -q '^Depends:.*libpqxx-6.4' <<<"$control" || fail "dpkg-shlibdeps found no libpqxx: $control"
files=$(dpkg-deb -c "$deb" | awk '{print $6}')
for want in ./usr/bin/fabtrack ./usr/share/fabtrack/schema/001_initial.sql \
  ./usr/share/fabtrack/dashboards/prometheus/fabtrack-alerts.yml \
  ./usr/share/fabtrack/nightly/fabtrack-nightly-cron.sh ./usr/share/man/man1/fabtrack.1.gz \
  ./usr/share/fabtrack/slurm/fabtrack-node-check.sh ./usr/share/fabtrack/slurm/fabtrack-ras-watchdog.sh \
  ./usr/share/fabtrack/slurm/hook-conf.sh \
  ./usr/lib/systemd/system/fabtrack-exporter.service ./usr/lib/systemd/system/fabtrack-nightly.timer \
  ./usr/share/doc/fabtrack/examples/nightly.conf; do
  grep -qx -- "$want" <<<"$files" || fail "$want is not in the package"
done
dpkg-deb -x "$deb" "$work/unpacked"
for hook in fabtrack-node-check.sh fabtrack-ras-watchdog.sh; do
  [[ -x $work/unpacked/usr/share/fabtrack/slurm/$hook ]] || fail "the packaged $hook is not executable"
done
grep -q '^FABTRACK=/usr/bin/fabtrack$' "$work/unpacked/usr/share/doc/fabtrack/examples/nightly.conf" ||
  fail "the packaged nightly.conf example does not point at /usr/bin/fabtrack"
# Every command's help made it into the man page.
zcat "$work/unpacked/usr/share/man/man1/fabtrack.1.gz" >"$work/fabtrack.1"
for section in "fabtrack analyze" "fabtrack db start" "fabtrack counters serve" "fabtrack fabric scan"; do
  grep -qx ".SS $section" "$work/fabtrack.1" || fail "man page lacks $section"
done

# Install as a deployment does: the Ansible role fabtrack_binaries with
# method package (apt, dependencies from what this machine has), the
# binaries linked into its prefix for the other roles.
cat >"$work/install.yml" <<PLAY
- name: Install the fabtrack package
  hosts: localhost
  gather_facts: false
  roles:
    - role: fabtrack_binaries
PLAY
ANSIBLE_ROLES_PATH=$src/ansible/roles ANSIBLE_LOCAL_TEMP=$work/ansible-tmp \
  ansible-playbook -i localhost, -c local "$work/install.yml" \
  -e fabtrack_binaries_method=package -e "fabtrack_binaries_deb=$deb" \
  -e "fabtrack_prefix=$work/prefix" -e "fabtrack_config_dir=$work/etc" \
  -e "fabtrack_spool_dir=$work/role-spool" -e "fabtrack_systemd_unit_dir=$work/units" \
  -e fabtrack_manage_services=false >"$work/ansible.log" 2>&1 ||
  { cat "$work/ansible.log"; fail "the fabtrack_binaries role could not install $deb"; }
dpkg -s fabtrack >/dev/null 2>&1 || fail "the role ran but dpkg does not know fabtrack"
[[ $(readlink "$work/prefix/bin/fabtrack") == /usr/bin/fabtrack ]] ||
  fail "the role did not link the package's fabtrack into its prefix"
[[ $(/usr/bin/fabtrack --version) == "fabtrack $(dpkg-deb -f "$deb" Version)" ]] ||
  fail "installed fabtrack says $(/usr/bin/fabtrack --version)"
getent passwd fabtrack >/dev/null || fail "the package created no fabtrack user"
[[ $(stat -c %U /var/lib/fabtrack) == fabtrack ]] || fail "/var/lib/fabtrack is not fabtrack's"
[[ -d /etc/fabtrack ]] || fail "no /etc/fabtrack for the README's nightly.conf"

# The units as systemd reads them (no output, exit 0).
if ! out=$(systemd-analyze verify /usr/lib/systemd/system/fabtrack-{exporter,db,nightly}.service \
  /usr/lib/systemd/system/fabtrack-nightly.timer 2>&1) || [[ -n $out ]]; then
  fail "systemd-analyze verify: $out"
fi

# End to end with the installed binary: the embedded server runs as the
# package's fabtrack user (root is refused by PostgreSQL).
export FABTRACK_DATA_DIR=$work/pg FABTRACK_SPOOL_DIR=$work/spool
/usr/bin/fabtrack db start >"$work/db.log" 2>&1 || { cat "$work/db.log"; fail "db start"; }
[[ $(stat -c %U "$work/pg") == fabtrack ]] || fail "the embedded server's folder is not fabtrack's"
fixture=$src/tests/fixtures/nccl_tests/t06_allreduce_newest_16rank_pci_ids.txt
/usr/bin/fabtrack ingest "$fixture" --cluster pkg --at 2026-11-30T01:30:00Z >"$work/ingest.log" 2>&1 ||
  { cat "$work/ingest.log"; fail "installed ingest"; }
grep -q "stored" "$work/ingest.log" || fail "ingest stored nothing: $(cat "$work/ingest.log")"
rc=0
/usr/bin/fabtrack analyze --cluster pkg --since 2026-11-29 >"$work/analyze.log" 2>&1 || rc=$?
((rc <= 2)) || { cat "$work/analyze.log"; fail "installed analyze could not analyze (exit $rc)"; }
grep -q "pkg" "$work/analyze.log" || fail "analyze said nothing of cluster pkg: $(cat "$work/analyze.log")"
/usr/bin/fabtrack db stop >/dev/null 2>&1 || fail "db stop"

# Remove, then purge: nothing of the package is left.
apt-get remove -y -q fabtrack >"$work/apt.log" 2>&1 || { cat "$work/apt.log"; fail "apt remove"; }
for gone in /usr/bin/fabtrack /usr/bin/fabtrack-allreduce /usr/share/fabtrack \
  /usr/lib/systemd/system/fabtrack-exporter.service /usr/share/man/man1/fabtrack.1.gz; do
  [[ ! -e $gone ]] || fail "$gone is left after apt remove"
done
apt-get purge -y -q fabtrack >"$work/apt.log" 2>&1 || { cat "$work/apt.log"; fail "apt purge"; }
! dpkg -s fabtrack >/dev/null 2>&1 || fail "dpkg still knows fabtrack after purge"
[[ ! -e /var/log/fabtrack ]] || fail "purge left /var/log/fabtrack"
((etc_before == 1)) || [[ ! -e /etc/fabtrack ]] || fail "purge left an empty /etc/fabtrack"
echo "PASS: package built ($(du -h "$deb" | cut -f1)), installed, ran ingest and analyze, units verified, removed and purged"
