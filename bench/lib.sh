# Shared by the bench scripts (sourced): a free port, and waiting for a started `trove serve` to answer.

# A TCP port on 127.0.0.1 that nothing listens on now.
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# wait_for_trove URL PID LOG NAME: waits (up to 30 s) until URL/health answers; when the process PID ends first,
# prints its LOG and fails naming NAME (the script).
wait_for_trove() {
  local url="$1" pid="$2" log="$3" name="$4"
  for _ in $(seq 1 300); do
    curl -fsS "$url/health" >/dev/null 2>&1 && return 0
    if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
      cat "$log" >&2
      echo "$name: trove did not start" >&2
      exit 1
    fi
    sleep 0.1
  done
  echo "$name: nothing answers at $url" >&2
  exit 1
}

# start_trove BIN DIR NAME: serves BIN on the SQLite store in DIR/trove (made and migrated first) on a free
# loopback port, its log in DIR/server.log; sets $server (its pid), $base (its URL) and $token (a bearer token of a
# member `bench`). NAME names the script in a failure.
start_trove() {
  local bin="$1" dir="$2" name="$3" port
  port="$(free_port)"
  base="http://127.0.0.1:$port"
  export TROVE_DATA_DIR="$dir/trove" TROVE_BIND="127.0.0.1:$port"
  mkdir -p "$dir"
  "$bin" migrate >/dev/null
  token="$("$bin" token new --member bench)"
  "$bin" serve >"$dir/server.log" 2>&1 &
  server=$!
  wait_for_trove "$base" "$server" "$dir/server.log" "$name"
}
