#!/usr/bin/env bash
# The phases of one `trove import` into PostgreSQL, read off the server's own log (docs/perf/search-totals-import.md):
# makes ITEMS generated rows in our CSV format, a scratch database with `log_min_duration_statement = 0`, imports
# the file with the release `trove`, and prints each statement that took at least MIN_MS milliseconds with the
# time the server logged it, then the import's wall time and peak RSS. The gaps between the lines are the
# client's own work (reading and checking the CSV, making the rows). Last, on the imported items, `ANALYZE items`
# timed twice in turn with every column's statistics (the targets m0012_item_statistics sets to 0 put back to
# the default) and with the schema's own targets (docs/perf/search-totals-import.md).
#
# Environment: ITEMS (100000), MIN_MS (20), PG (postgres://postgres@127.0.0.1:5432), PG_LOG (the newest file in
# /var/log/postgresql), CARGO_TARGET_DIR (target), SKIP_BUILD (set: take the binaries as built).
# Needs psql and /usr/bin/time, and read access to the server's log.
set -euo pipefail
cd "$(dirname "$0")/.."

ITEMS=${ITEMS:-100000}
MIN_MS=${MIN_MS:-20}
PG=${PG:-postgres://postgres@127.0.0.1:5432}
TARGET=${CARGO_TARGET_DIR:-target}
PG_LOG=${PG_LOG:-$(ls -t /var/log/postgresql/*.log | head -n 1)}
[ -n "${SKIP_BUILD:-}" ] || cargo build --release -p trove --features ceiling --bins

WORK=$(mktemp -d /tmp/trove-phases.XXXXXX)
DB="trove_phases_$$"
cleanup() {
    psql -q "$PG/postgres" -c "DROP DATABASE IF EXISTS $DB" >/dev/null 2>&1 || true
    rm -rf "$WORK"
}
trap cleanup EXIT

"$TARGET/release/http_ceiling" csv "$WORK/items.csv" "$ITEMS"
psql -q "$PG/postgres" -c "CREATE DATABASE $DB" -c "ALTER DATABASE $DB SET log_min_duration_statement = 0"
seen=$(wc -l <"$PG_LOG")
echo "start $(date +%T.%3N)"
/usr/bin/time -f "import: %e s, peak RSS %M KB" env -u MODEL_API_KEY DATABASE_URL="$PG/$DB" RUST_LOG=warn \
    "$TARGET/release/trove" import "$WORK/items.csv"
echo "end   $(date +%T.%3N)"
tail -n +"$((seen + 1))" "$PG_LOG" | grep "$DB LOG:  duration" |
    awk -v min="$MIN_MS" '{for (i = 1; i <= NF; i++) if ($i == "duration:") d = $(i + 1);
        if (d + 0 >= min) print $2, d " ms", substr($0, index($0, " ms ") + 4, 80)}'

# ANALYZE of every column against the schema's (m0012_item_statistics), in turn, on the same rows.
unfiltered=$(psql -Atq "$PG/$DB" -c "SELECT string_agg(attname, ' ') FROM pg_attribute \
    WHERE attrelid = 'items'::regclass AND attnum > 0 AND NOT attisdropped AND attstattarget = 0")
targets() { printf 'ALTER TABLE items %s' "$(for c in $unfiltered; do printf 'ALTER COLUMN %s SET STATISTICS %s, ' "$c" "$1"; done | sed 's/, $//')"; }
for round in 1 2; do
    for variant in all filtered; do
        if [ "$variant" = all ]; then target=-1; else target=0; fi
        psql -q "$PG/$DB" -c "$(targets $target)"
        ms=$(psql -q "$PG/$DB" -c "SET log_min_duration_statement = -1" -c '\timing on' -c 'ANALYZE items' |
            awk '/^Time:/ {print $2}')
        echo "ANALYZE items, round $round, statistics of $variant columns: $ms ms"
    done
done
