#!/usr/bin/env bash
# The whole Ansible deployment, for real, against this machine:
#   1. ansible-playbook --syntax-check and ansible-lint (default profile, no violations);
#   2. site.yml with connection=local into a throwaway prefix (mktemp): the
#      embedded PostgreSQL in that prefix, binaries, configs, units (written
#      and checked with systemd-analyze verify, not started: services are
#      unmanaged), the cron.d file and Grafana provisioning all under the temp
#      dir; passwords from the environment and from an Ansible Vault file;
#   3. a second run changes nothing;
#   4. the deployed pieces work: the exporter's ExecStart from the installed
#      unit serves metrics of a fixture sysfs tree; the command of the installed
#      cron entry (with cron's bare environment) runs the nightly job with the
#      installed config against the deployed database, as the nightly login
#      role, and its runs land in PostgreSQL; the login roles have exactly
#      their group rights; no password is in any plain file or in the logs;
#   5. the Slurm variant renders its scrontab (not installed) and removes the cron entry;
#   6. the system-PostgreSQL variant against a throwaway PostgreSQL cluster
#      (initdb in the temp dir, password authentication only): the role creates
#      the owner, the database and the logins as the postgres superuser (peer),
#      migrates as the owner with its pgpass file, a second run changes
#      nothing, and the deployed night logs in as fabtrack_nightly with the
#      password from its pgpass file and stores its runs.
# Everything missing is a failure, never a skip.
# Usage: tests/ansible/site_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
repo=$(readlink -f "$1")
build=$(readlink -f "$2")
fail() { echo "FAIL: $*" >&2; exit 1; }

[[ $(id -u) -eq 0 ]] || fail "run as root (the servers run as postgres through runuser)"
for tool in ansible-playbook ansible-vault systemd-analyze psql curl mpirun openssl runuser; do
  command -v "$tool" >/dev/null || fail "$tool is missing (scripts/install-deps.sh)"
done
if ! command -v ansible-lint >/dev/null; then
  "$repo/scripts/install-deps.sh" >/dev/null || fail "scripts/install-deps.sh failed"
  command -v ansible-lint >/dev/null || fail "ansible-lint is missing (Debian package ansible-lint)"
fi
[[ -x $build/cli/fabtrack && -x $build/app/fabtrack-allreduce ]] ||
  fail "no binaries in $build (cmake --build)"

tmp=$(mktemp -d)
chmod 755 "$tmp" # the embedded server runs as postgres (or fabtrack) and must reach its data dir
prefix=$tmp/prefix
pgbin=${FABTRACK_PG_BINDIR:-/usr/lib/postgresql/15/bin}
data=$prefix/var/postgres
cleanup() {
  if [[ -n ${lint_pid:-} ]]; then kill "$lint_pid" 2>/dev/null || true; fi
  if [[ -x $prefix/bin/fabtrack ]]; then "$prefix/bin/fabtrack" db stop --data-dir "$data" >/dev/null 2>&1 || true; fi
  [[ -n ${exporter_pid:-} ]] && kill "$exporter_pid" 2>/dev/null
  if [[ -f $tmp/pg/data/postmaster.pid ]]; then
    runuser -u postgres -- "$pgbin/pg_ctl" -D "$tmp/pg/data" -m immediate -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
# The facts gathered by the first run are reused by the later ones (the
# same host; a cache in the temp dir): five runs gather them once.
export ANSIBLE_NOCOLOR=1 ANSIBLE_FORCE_COLOR=0 ANSIBLE_LOCAL_TEMP=$tmp/ansible-local \
  ANSIBLE_REMOTE_TEMP=$tmp/ansible-remote ANSIBLE_RETRY_FILES_ENABLED=0 \
  ANSIBLE_HOME=$tmp/ansible-home ANSIBLE_STDOUT_CALLBACK=default ANSIBLE_PIPELINING=1 \
  ANSIBLE_GATHERING=smart ANSIBLE_CACHE_PLUGIN=jsonfile ANSIBLE_CACHE_PLUGIN_CONNECTION=$tmp/facts
export FABTRACK_SPOOL_DIR=$tmp/spool-test

# Syntax check and lint read only the repository: they run beside the
# deployment (a minute of ansible-lint) and are waited for at the end.
echo "--- syntax and lint (beside the runs)"
syntax_and_lint() {
  cd "$repo/ansible"
  ansible-playbook --syntax-check -i localhost, site.yml >"$tmp/syntax.log" 2>&1 || { cat "$tmp/syntax.log"; fail "syntax check"; }
  # ansible-lint keeps its cache in $HOME/.cache: point it at the temp dir.
  if ! HOME=$tmp/lint-home XDG_CACHE_HOME=$tmp/lint-cache ansible-lint --offline --nocolor >"$tmp/lint.log" 2>&1; then
    cat "$tmp/lint.log"; fail "ansible-lint found violations"
  fi
  grep -q "Passed with production profile: 0 failure(s), 0 warning(s)" "$tmp/lint.log" ||
    { cat "$tmp/lint.log"; fail "ansible-lint did not pass cleanly"; }
}
(syntax_and_lint) >"$tmp/lint-check.log" 2>&1 &
lint_pid=$!

echo "--- secrets: two from the environment, one from an Ansible Vault file"
FABTRACK_DB_COLLECTOR_PASSWORD=coll-$(openssl rand -hex 12)
FABTRACK_GRAFANA_DB_PASSWORD=graf-$(openssl rand -hex 12)
FABTRACK_DB_OWNER_PASSWORD=own-$(openssl rand -hex 12)
export FABTRACK_DB_COLLECTOR_PASSWORD FABTRACK_GRAFANA_DB_PASSWORD FABTRACK_DB_OWNER_PASSWORD
nightly_pw=night-$(openssl rand -hex 12)
openssl rand -hex 16 >"$tmp/vault-pass"
printf -- '---\nvault_fabtrack_db_nightly_password: %s\n' "$nightly_pw" >"$tmp/vault.yml"
ansible-vault encrypt --vault-password-file "$tmp/vault-pass" "$tmp/vault.yml" >/dev/null 2>&1
grep -q "^[$]ANSIBLE_VAULT" "$tmp/vault.yml" || fail "vault file not encrypted"
secrets=("$FABTRACK_DB_COLLECTOR_PASSWORD" "$FABTRACK_GRAFANA_DB_PASSWORD" "$nightly_pw" "$FABTRACK_DB_OWNER_PASSWORD")

port=$((20000 + RANDOM % 20000))
cat >"$tmp/inventory.yml" <<EOF
all:
  hosts:
    localhost:
      ansible_connection: local
      ansible_python_interpreter: /usr/bin/python3
  children:
    database: {hosts: {localhost: {}}}
    collectors: {hosts: {localhost: {}}}
    nightly: {hosts: {localhost: {}}}
    grafana: {hosts: {localhost: {}}}
EOF
cat >"$tmp/vars.yml" <<EOF
ansible_become: false
fabtrack_deps_script_dest: $tmp/install-deps.sh
fabtrack_prefix: $prefix
fabtrack_config_dir: $tmp/etc/fabtrack
fabtrack_user: root
fabtrack_group: root
fabtrack_create_user: false
fabtrack_manage_services: false
fabtrack_systemd_unit_dir: $tmp/etc/systemd/system
fabtrack_spool_dir: $tmp/spool
fabtrack_build_dir: $build
fabtrack_db_embedded: true
fabtrack_db_data_dir: $data
fabtrack_collector_listen: 127.0.0.1:$port
fabtrack_collector_sysfs: $repo/tests/fixtures/sysfs/roce_host
fabtrack_collector_hw_counters: np_cnp_sent,rp_cnp_handled
fabtrack_nightly_scheduler: cron
fabtrack_nightly_cluster: ansible-test
fabtrack_nightly_node_counts: "1,2"
fabtrack_nightly_ranks_per_node: 1
fabtrack_nightly_backend: mpi
fabtrack_nightly_min_bytes: 8
fabtrack_nightly_max_bytes: 64K
fabtrack_nightly_step_factor: 8
fabtrack_nightly_iters: 5
fabtrack_nightly_warmup: 1
fabtrack_nightly_output_dir: $tmp/var/results
fabtrack_nightly_report_dir: $tmp/var/reports
fabtrack_nightly_log_dir: $tmp/var/log
fabtrack_nightly_textfile: $tmp/var/prom/fabtrack.prom
fabtrack_nightly_ports: "off"
fabtrack_nightly_launcher: local
fabtrack_nightly_cron_file: $tmp/etc/cron.d/fabtrack-nightly
fabtrack_nightly_install_cron: false
fabtrack_grafana_provisioning_dir: $tmp/etc/grafana/provisioning
fabtrack_grafana_dashboards_dir: $tmp/var/lib/grafana/dashboards/fabtrack
fabtrack_grafana_env_file: $tmp/etc/grafana/fabtrack.env
EOF
play() {
  ansible-playbook -i "$tmp/inventory.yml" -c local "$repo/ansible/site.yml" \
    -e "@$tmp/vars.yml" -e "@$tmp/vault.yml" --vault-password-file "$tmp/vault-pass" "$@"
}

echo "--- first run"
play >"$tmp/run1.log" 2>&1 || { cat "$tmp/run1.log"; fail "first run failed"; }
grep -Eq "localhost +: ok=[0-9]+ +changed=[1-9][0-9]* .*failed=0" "$tmp/run1.log" ||
  { cat "$tmp/run1.log"; fail "first run: no changes or failures"; }
echo "--- second run (idempotent)"
play >"$tmp/run2.log" 2>&1 || { cat "$tmp/run2.log"; fail "second run failed"; }
if ! grep -Eq "localhost +: ok=[0-9]+ +changed=0 .*failed=0" "$tmp/run2.log"; then
  grep -B3 "^changed:" "$tmp/run2.log" || true
  tail -5 "$tmp/run2.log"; fail "second run was not idempotent"
fi
tail -2 "$tmp/run2.log" | head -1

echo "--- what was deployed"
for f in bin/fabtrack bin/fabtrack-allreduce share/nightly/fabtrack-nightly-cron.sh share/nightly/fabtrack-nightly.sbatch; do
  [[ -x $prefix/$f ]] || fail "$prefix/$f not installed"
done
cmp -s "$build/cli/fabtrack" "$prefix/bin/fabtrack" || fail "installed fabtrack differs from the build"
unit=$tmp/etc/systemd/system/fabtrack-counters.service
[[ -f $unit && -f $tmp/etc/systemd/system/fabtrack-db.service ]] || fail "units not written"
systemd-analyze verify "$unit" 2>"$tmp/verify.err" || fail "unit does not verify: $(cat "$tmp/verify.err")"
grep -q "^ExecStart=$prefix/bin/fabtrack counters serve --listen 127.0.0.1:$port " "$unit" || fail "ExecStart: $(grep ExecStart "$unit")"
grep -q "Check that the exporter can read sysfs" "$tmp/run1.log" || fail "sysfs check did not run"
grep -q '"2 RDMA device(s) under' "$tmp/run1.log" || fail "the sysfs check did not find the fixture's 2 devices"
for f in etc/fabtrack/nightly.pgpass etc/fabtrack/collector.pgpass etc/grafana/fabtrack.env; do
  [[ $(stat -c %a "$tmp/$f") == 600 ]] || fail "$f is not mode 0600"
done
cron=$tmp/etc/cron.d/fabtrack-nightly
[[ -f $cron ]] || fail "no cron.d entry"
conf=$tmp/etc/fabtrack/nightly.conf
{ grep -q "^CLUSTER=ansible-test$" "$conf" && grep -q "^FABTRACK=$prefix/bin/fabtrack$" "$conf"; } ||
  fail "nightly.conf: $(cat "$conf")"
grep -q "^DB=host=$data/run port=5432 dbname=fabtrack user=fabtrack_nightly" "$conf" || fail "nightly DB: $(grep ^DB= "$conf")"
ds=$tmp/etc/grafana/provisioning/datasources/fabtrack.yaml
python3 - "$ds" "$tmp/etc/grafana/provisioning/dashboards/fabtrack.yaml" "$tmp/var/lib/grafana/dashboards/fabtrack" <<'PY' || fail "Grafana provisioning"
import sys, yaml
ds = yaml.safe_load(open(sys.argv[1]))["datasources"][0]
assert ds["uid"] == "fabtrack-pg" and ds["user"] == "fabtrack_grafana", ds
assert ds["secureJsonData"]["password"] == "$FABTRACK_GRAFANA_DB_PASSWORD", "password placeholder replaced"
prov = yaml.safe_load(open(sys.argv[2]))["providers"][0]
assert prov["options"]["path"] == sys.argv[3], prov
PY
for b in "$repo"/dashboards/grafana/dashboards/*.json; do
  cmp -s "$b" "$tmp/var/lib/grafana/dashboards/fabtrack/$(basename "$b")" || fail "board $(basename "$b") not installed"
done
grep -qx "FABTRACK_GRAFANA_DB_PASSWORD=$FABTRACK_GRAFANA_DB_PASSWORD" "$tmp/etc/grafana/fabtrack.env" || fail "Grafana env file"
grep -q ":fabtrack_nightly:$nightly_pw$" "$tmp/etc/fabtrack/nightly.pgpass" || fail "nightly pgpass (from the vault)"

echo "--- secrets: only in the 0600 files, never in a log or another file"
allowed="$tmp/etc/fabtrack/nightly.pgpass $tmp/etc/fabtrack/collector.pgpass $tmp/etc/grafana/fabtrack.env"
for s in "${secrets[@]}"; do
  while IFS= read -r f; do
    [[ " $allowed " == *" $f "* ]] || fail "a password is in $f"
  done < <(grep -rlF -- "$s" "$tmp/etc" "$prefix/share" "$tmp/var" "$tmp"/run*.log 2>/dev/null || true)
  grep -qF -- "$s" "$data/postgresql.log" && fail "a password is in the server log"
done

echo "--- the database and its roles"
owner="host=$data/run dbname=fabtrack user=fabtrack"
[[ $(psql "$owner" -Atc "SELECT max(version) FROM fabtrack_schema_migrations") -ge 6 ]] || fail "schema not migrated"
roles=$(psql "$owner" -Atc "SELECT r.rolname || ':' || string_agg(g.rolname, ',' ORDER BY g.rolname) || ':' ||
  left(a.rolpassword, 14) FROM pg_roles r JOIN pg_authid a ON a.oid = r.oid
  JOIN pg_auth_members m ON m.member = r.oid JOIN pg_roles g ON g.oid = m.roleid
  WHERE r.rolname LIKE 'fabtrack\\_%' AND r.rolcanlogin GROUP BY r.rolname, a.rolpassword ORDER BY 1")
expected="fabtrack_collector:fabtrack_writer:SCRAM-SHA-256\$
fabtrack_grafana:fabtrack_reader:SCRAM-SHA-256\$
fabtrack_nightly:fabtrack_analyzer,fabtrack_writer:SCRAM-SHA-256\$"
[[ $roles == "$expected" ]] || fail "login roles: $roles"
[[ $(psql "$owner" -Atc "SELECT setconfig::text FROM pg_db_role_setting WHERE setrole = 'fabtrack_grafana'::regrole") == *default_transaction_read_only=on* ]] ||
  fail "fabtrack_grafana sessions are not read-only"

echo "--- the exporter, as its unit starts it"
exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
# shellcheck disable=SC2086  # the unit's command line, word-split as systemd does here
$exec_start --duration 20 >"$tmp/exporter.log" 2>&1 &
exporter_pid=$!
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$port/metrics" >"$tmp/metrics" 2>/dev/null && break; sleep 0.2; done
grep -q '^node_infiniband_info{device="mlx5_0"' "$tmp/metrics" || { cat "$tmp/exporter.log"; fail "exporter did not serve the fixture's ports"; }
# The inventory's hw_counters choice reached the unit: only the listed two.
grep -q '^fabtrack_exporter_hw_counters_selection{selection="listed"} 1' "$tmp/metrics" || fail "hw_counters selection not passed"
grep -q 'counter="np_cnp_sent"' "$tmp/metrics" || fail "np_cnp_sent not exported"
! grep -q 'counter="out_of_buffer"' "$tmp/metrics" || fail "out_of_buffer exported though not selected"
kill "$exporter_pid" 2>/dev/null; wait "$exporter_pid" 2>/dev/null || true; exporter_pid=

# Cron's bare environment, plus the sanitizer settings when this suite runs
# under scripts/sanitize.sh (they are the test's, not the deployment's).
sanitizer_env=()
for v in ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS OMPI_MCA_mca_base_component_disable_dlclose; do
  if [[ -n ${!v:-} ]]; then sanitizer_env+=("$v=${!v}"); fi
done
echo "--- the deployed nightly job, as cron would start it"
line=$(grep -E '^[0-9*]' "$cron")
read -r m h dom mon dow user cmd <<<"$line"
[[ "$m $h $dom $mon $dow $user" == "30 1 * * * root" ]] || fail "cron schedule: $line"
[[ $cmd == *"$prefix/share/nightly/fabtrack-nightly-cron.sh" ]] || fail "cron command: $cmd"
status=0
env -i HOME="$tmp" LOGNAME=root SHELL=/bin/sh PATH=/usr/local/bin:/usr/bin:/bin "${sanitizer_env[@]}" \
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 /bin/sh -c "$cmd" >"$tmp/night.out" 2>&1 || status=$?
tail -3 "$tmp/night.out"
((status <= 2)) || { cat "$tmp/night.out"; fail "the night exited $status"; }
grep -q "analysis exit $status" "$tmp/night.out" || fail "exit status is not the analyzer's"
[[ $(psql "$owner" -Atc "SELECT count(*) FROM runs WHERE cluster = 'ansible-test'") == 2 ]] ||
  { cat "$tmp/night.out"; fail "2 runs expected in PostgreSQL"; }
[[ $(psql "$owner" -Atc "SELECT count(*) FROM analyses WHERE cluster = 'ansible-test'") -ge 1 ]] || fail "no analysis stored"
ls "$tmp"/var/reports/ansible-test-*.html >/dev/null 2>&1 || fail "no HTML report"
ls "$tmp"/var/log/nightly-*.log >/dev/null 2>&1 || fail "no dated log"
grep -q '^fabtrack_analysis_status{cluster="ansible-test"}' "$tmp/var/prom/fabtrack.prom" || fail "no textfile"
[[ -z $(ls -A "$tmp/spool" 2>/dev/null) ]] || fail "the night spooled instead of storing"
psql "host=$data/run dbname=fabtrack user=fabtrack_nightly" -c "DELETE FROM runs" >/dev/null 2>&1 &&
  fail "fabtrack_nightly may delete runs"
psql "host=$data/run dbname=fabtrack user=fabtrack_grafana" -c "INSERT INTO clusters (name) VALUES ('x')" >/dev/null 2>&1 &&
  fail "fabtrack_grafana may write"

echo "--- the Slurm variant (scrontab rendered, not installed)"
play --tags nightly -e fabtrack_nightly_scheduler=slurm -e fabtrack_nightly_scrontab_install=false \
  -e fabtrack_nightly_slurm_nodes=4 >"$tmp/run3.log" 2>&1 || { cat "$tmp/run3.log"; fail "slurm run failed"; }
scron=$tmp/etc/fabtrack/fabtrack-nightly.scrontab
grep -q "^#SCRON --job-name=fabtrack-nightly --nodes=4 " "$scron" || fail "scrontab: $(cat "$scron")"
grep -q "FABTRACK_NIGHTLY_LIB=$prefix/share/nightly .*$prefix/share/nightly/fabtrack-nightly.sbatch$" "$scron" ||
  fail "scrontab command: $(cat "$scron")"
[[ ! -e $cron ]] || fail "the cron entry stayed with the Slurm variant"
grep -A1 "HANDLER .*Install the scrontab" "$tmp/run3.log" | grep -q "^skipping:" ||
  fail "the scrontab handler did not run (skipped) on the new scrontab"

echo "--- the system PostgreSQL variant (a throwaway cluster, password authentication)"
[[ -x $pgbin/initdb ]] || fail "no PostgreSQL server binaries in $pgbin"
pg=$tmp/pg
mkdir -p "$pg/data" "$pg/sock"
chown postgres: "$pg/data" "$pg/sock"
runuser -u postgres -- "$pgbin/initdb" -D "$pg/data" -U postgres --auth-local=peer --auth-host=reject \
  --no-locale >"$tmp/initdb.log" 2>&1 || { cat "$tmp/initdb.log"; fail "initdb"; }
printf 'local all postgres peer\nlocal all all scram-sha-256\n' >"$pg/data/pg_hba.conf"
runuser -u postgres -- mkdir "$pg/data/conf.d"
runuser -u postgres -- "$pgbin/pg_ctl" -D "$pg/data" -l "$pg/data/server.log" -w \
  -o "-k $pg/sock -c listen_addresses=''" start >/dev/null || fail "throwaway PostgreSQL did not start"
cat >"$tmp/vars-system.yml" <<EOF
fabtrack_db_embedded: false
fabtrack_db_host: $pg/sock
fabtrack_db_sslmode: disable
fabtrack_database_admin_conninfo: host=$pg/sock port=5432 dbname=postgres user=postgres
fabtrack_database_owner_host: $pg/sock
fabtrack_database_pg_conf_dir: $pg/data
fabtrack_nightly_cluster: ansible-system
EOF
play --tags database,nightly -e "@$tmp/vars-system.yml" >"$tmp/run4.log" 2>&1 || { cat "$tmp/run4.log"; fail "system PostgreSQL run failed"; }
play --tags database,nightly -e "@$tmp/vars-system.yml" >"$tmp/run5.log" 2>&1 || { cat "$tmp/run5.log"; fail "system PostgreSQL rerun failed"; }
if ! grep -Eq "localhost +: ok=[0-9]+ +changed=0 .*failed=0" "$tmp/run5.log"; then
  grep -B3 "^changed:" "$tmp/run5.log" || true; fail "system PostgreSQL rerun was not idempotent"
fi
super="host=$pg/sock dbname=fabtrack user=postgres"
sq() { runuser -u postgres -- psql "$super" -Atc "$1"; }
[[ $(sq "SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = 'fabtrack'") == fabtrack ]] ||
  fail "database not owned by the schema owner"
[[ $(sq "SELECT rolsuper FROM pg_roles WHERE rolname = 'fabtrack'") == f ]] || fail "the schema owner must not be a superuser"
[[ $(sq "SELECT pg_get_userbyid(relowner) FROM pg_class WHERE relname = 'runs'") == fabtrack ]] ||
  fail "tables not created by the owner's migrations"
grep -q "^# BEGIN fabtrack (Ansible)" "$pg/data/pg_hba.conf" || fail "pg_hba.conf block missing"
[[ $(stat -c %a "$tmp/etc/fabtrack/owner.pgpass") == 600 ]] || fail "owner.pgpass is not mode 0600"
PGPASSFILE=/dev/null psql "host=$pg/sock dbname=fabtrack user=fabtrack_nightly" -w -c "SELECT 1" >/dev/null 2>&1 &&
  fail "fabtrack_nightly logged in without a password"
line=$(grep -E '^[0-9*]' "$cron")
read -r m h dom mon dow user cmd <<<"$line"
status=0
env -i HOME="$tmp" LOGNAME=root SHELL=/bin/sh PATH=/usr/local/bin:/usr/bin:/bin "${sanitizer_env[@]}" \
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 /bin/sh -c "$cmd" >"$tmp/night2.out" 2>&1 || status=$?
tail -1 "$tmp/night2.out"
((status <= 2)) || { cat "$tmp/night2.out"; fail "the night against the system PostgreSQL exited $status"; }
[[ $(sq "SELECT count(*) FROM runs WHERE cluster = 'ansible-system'") == 2 ]] ||
  { cat "$tmp/night2.out"; fail "2 runs expected in the system PostgreSQL"; }
[[ $(sq "SELECT count(*) FROM analyses WHERE cluster = 'ansible-system'") -ge 1 ]] || fail "no analysis stored"
[[ -z $(ls -A "$tmp/spool" 2>/dev/null) ]] || fail "the night spooled instead of storing"
for s in "${secrets[@]}"; do
  grep -qF -- "$s" "$pg/data/server.log" "$tmp/run4.log" "$tmp/run5.log" "$tmp/night2.out" && fail "a password leaked into a log"
done

wait "$lint_pid" || { cat "$tmp/lint-check.log"; fail "syntax check or lint (above)"; }
lint_pid=
echo "--- syntax check and ansible-lint: clean"
echo "ansible site: lint clean, deployed into $tmp, idempotent, the deployed night stored its runs (embedded and system PostgreSQL)"
