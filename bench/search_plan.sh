#!/usr/bin/env bash
# Where a ranked search page's time goes on PostgreSQL, and one alternative measured beside it (docs/perf/search-totals-import.md,
# "Search"): makes ITEMS generated rows in our CSV format, imports them with the release `trove` into a scratch
# database, prepares the store's page statement for a search (the one `Inventory::list` runs, as PostgreSQL's
# log shows it) and the same page with the ids ranked in a subquery and the 51 rows joined back, then prints the
# plan of the store's statement (`EXPLAIN (ANALYZE, BUFFERS)`, run after enough executions to take its generic
# plan, as sqlx's prepared statements do) and the medians of RUNS interleaved executions of each.
#
# Environment: ITEMS (100000), RUNS (60), WORD (inr18650:*, in 1.4% of the generated items), PG
# (postgres://postgres@127.0.0.1:5432), CARGO_TARGET_DIR (target), SKIP_BUILD (set: take the binaries as built).
set -euo pipefail
cd "$(dirname "$0")/.."

ITEMS=${ITEMS:-100000}
RUNS=${RUNS:-60}
WORD=${WORD:-inr18650:*}
PG=${PG:-postgres://postgres@127.0.0.1:5432}
TARGET=${CARGO_TARGET_DIR:-target}
[ -n "${SKIP_BUILD:-}" ] || cargo build --release -p trove --features ceiling --bins

WORK=$(mktemp -d /tmp/trove-search-plan.XXXXXX)
DB="trove_search_plan_$$"
cleanup() {
    psql -q "$PG/postgres" -c "DROP DATABASE IF EXISTS $DB" >/dev/null 2>&1 || true
    rm -rf "$WORK"
}
trap cleanup EXIT

"$TARGET/release/http_ceiling" csv "$WORK/items.csv" "$ITEMS"
psql -q "$PG/postgres" -c "CREATE DATABASE $DB"
env -u MODEL_API_KEY DATABASE_URL="$PG/$DB" RUST_LOG=warn "$TARGET/release/trove" import "$WORK/items.csv"
psql -q "$PG/$DB" -c "ANALYZE"

COLUMNS='items.id, items.name, items.item_type, items.profile, items.condition, items.intent, items.availability,
  items.project_id, items.gone_reason, items.gone_at, items.gone_note, items.measurements, items.faults,
  items.tests_done, items.accessories, items.components, items.place_id, items.created_at, items.updated_at,
  items.version,
  (SELECT MIN(media.id) FROM media WHERE media.household_id = $1 AND media.item_id = items.id AND media.kind = $2)
  AS cover'
FILTER="items.household_id = \$3 AND items.gone_reason IS NULL AND items.search @@ to_tsquery('simple', \$4)"
RANK="-ts_rank(items.search, to_tsquery('simple', \$5))"
ARGS="(1, 'photo', 1, '$WORD', '$WORD')"
{
    echo "PREPARE store(bigint, text, bigint, text, text) AS SELECT $COLUMNS FROM items WHERE $FILTER
      ORDER BY $RANK, items.id LIMIT 51;"
    echo "PREPARE ranked_ids(bigint, text, bigint, text, text) AS SELECT $COLUMNS FROM
      (SELECT items.id, $RANK AS rank FROM items WHERE $FILTER ORDER BY 2, 1 LIMIT 51) AS ranked
      JOIN items USING (id) ORDER BY ranked.rank, ranked.id;"
    for _ in 1 2 3 4 5 6; do echo "EXECUTE store$ARGS;"; echo "EXECUTE ranked_ids$ARGS;"; done
} >"$WORK/prepare.sql"
{
    cat "$WORK/prepare.sql"
    echo "EXPLAIN (ANALYZE, BUFFERS) EXECUTE store$ARGS;"
} | psql -q "$PG/$DB" 2>&1 | grep -E "Scan|Sort|Limit|Heap Blocks|Buffers|Execution" | head -n 12
{
    cat "$WORK/prepare.sql"
    echo '\timing on'
    for _ in $(seq 1 "$RUNS"); do echo "EXECUTE store$ARGS;"; echo "EXECUTE ranked_ids$ARGS;"; done
} | psql -q -o /dev/null "$PG/$DB" 2>&1 | awk '/^Time:/ {print (n++ % 2 ? "ranked_ids" : "store"), $2}' |
    sort -k1,1 -k2,2n | awk '{v[$1][++c[$1]] = $2} END {for (k in c) printf "%s: median of %d %.3f ms\n", k, c[k], v[k][int((c[k] + 1) / 2)]}'
