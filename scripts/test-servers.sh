#!/usr/bin/env bash
# Makes sure the servers the scale-out tests use answer: PostgreSQL on 127.0.0.1:5432 (trust auth,
# database `test`) and Redis on 127.0.0.1:6379. Servers already running are used as they are; on a
# fresh machine the Debian packages are installed and throwaway instances started (data in /tmp).
set -euo pipefail

say() { printf '\033[1m[servers]\033[0m %s\n' "$*" >&2; }
open_port() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
apt_install() {
  local lock=(-o DPkg::Lock::Timeout=600)
  $sudo apt-get "${lock[@]}" update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get "${lock[@]}" install -y -qq --no-install-recommends "$@" >/dev/null
}

if ! open_port 6379; then
  command -v redis-server >/dev/null || { say "installing redis-server"; apt_install redis-server; }
  say "starting a throwaway Redis on 127.0.0.1:6379"
  mkdir -p /tmp/renderbridge-redis
  redis-server --port 6379 --bind 127.0.0.1 --save '' --appendonly yes --dir /tmp/renderbridge-redis --daemonize yes >/dev/null
fi

if ! open_port 5432; then
  bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
  if [ -z "$bin" ]; then
    say "installing postgresql"
    apt_install postgresql
    bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
  fi
  dir=/tmp/renderbridge-pg
  # initdb refuses to run as root: the cluster belongs to the postgres user the package created.
  as_pg=()
  [ "$(id -u)" -eq 0 ] && as_pg=(runuser -u postgres --)
  if [ ! -f "$dir/PG_VERSION" ]; then
    say "creating a throwaway PostgreSQL cluster in $dir"
    mkdir -p "$dir" && chmod 700 "$dir"
    [ "$(id -u)" -eq 0 ] && chown postgres: "$dir"
    "${as_pg[@]}" "$bin/initdb" -D "$dir" -U postgres --auth=trust >/dev/null
  fi
  say "starting PostgreSQL on 127.0.0.1:5432"
  "${as_pg[@]}" "$bin/pg_ctl" -D "$dir" -o "-p 5432 -k /tmp -c listen_addresses=127.0.0.1" -l "$dir/server.log" -w start >/dev/null
  "${as_pg[@]}" "$bin/psql" -h 127.0.0.1 -p 5432 -U postgres -tAc "select 1 from pg_database where datname='test'" | grep -q 1 ||
    "${as_pg[@]}" "$bin/createdb" -h 127.0.0.1 -p 5432 -U postgres test
fi
