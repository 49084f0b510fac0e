# Sourced by the Slurm hooks beside it (fabtrack-node-check.sh,
# fabtrack-ras-watchdog.sh): their settings from a KEY=VALUE file, then from
# the environment. The caller defines KEYS (the settings it knows, each a
# shell variable with its default) and log().
# read_hook_conf CONF_FILE ENV_PREFIX: a line that is not KEY=VALUE, or names
# a key not in KEYS, is logged with CONF_FILE:LINE and ignored (a hook must
# not fail a job for a typo); ENV_PREFIX<KEY> in the environment wins.
read_hook_conf() {
  local conf=$1 prefix=$2 n=0 line key value env_key
  if [[ -r $conf ]]; then
    while IFS= read -r line || [[ -n $line ]]; do
      n=$((n + 1))
      line=${line%%#*}
      [[ $line =~ ^[[:space:]]*$ ]] && continue
      if [[ ! $line =~ ^[[:space:]]*([A-Z_]+)=(.*)$ ]]; then
        log "$conf:$n: expected KEY=VALUE; ignored"
        continue
      fi
      key=${BASH_REMATCH[1]}
      value=${BASH_REMATCH[2]}
      value=${value%"${value##*[![:space:]]}"}
      if [[ " ${KEYS[*]} " != *" $key "* ]]; then
        log "$conf:$n: unknown setting $key; ignored"
        continue
      fi
      printf -v "$key" '%s' "$value"
    done <"$conf"
  fi
  for key in "${KEYS[@]}"; do
    env_key=$prefix$key
    [[ -n ${!env_key+set} ]] && printf -v "$key" '%s' "${!env_key}"
  done
}
