#!/usr/bin/env bash
# A fleet on one machine, end to end: a Mosquitto broker and a PostgreSQL with PostGIS (each on a free loopback port,
# in a directory of its own), fleet-ingest storing what the broker gets, and fleet-uplink sending the drive recorded in
# whereami's bundled recording as vehicle demo-1. It waits until every fix is stored, runs the README's two queries,
# and removes everything it started.
#
#   bash Samples/Fleet/end-to-end.sh
#
# Needs Debian's mosquitto and postgresql with PostGIS (Scripts/install-dependencies --fleet installs them) and the
# two programs (built here, a release build, unless FLEET_BIN names the folder they are in). PostgreSQL refuses to run as root: as root,
# it runs as the `postgres` user.
set -euo pipefail
cd "$(dirname "$0")/../.."
Scripts/install-dependencies --fleet
if [ -z "${FLEET_BIN:-}" ]; then
    # The release build the README's first command made (nothing to do then), or made here.
    swift build -c release --package-path Fleet --product fleet-uplink >&2
    swift build -c release --package-path Fleet --product fleet-ingest >&2
    FLEET_BIN=$(swift build -c release --package-path Fleet --show-bin-path)
fi
recording=Sources/WhereAmICore/Resources/drive.gpsd.json

work=$(mktemp -d /tmp/fleet-demo.XXXXXX)
chmod 755 "$work"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill -KILL -- "-$pid" 2>/dev/null || true; done
    [ -z "${pg_ctl:-}" ] || $as_postgres "$pg_ctl" -D "$work/db" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_for_port() {
    for _ in $(seq 300); do
        (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
        sleep 0.1
    done
    echo "nothing listens on 127.0.0.1:$1" >&2
    return 1
}

# The broker: persistent, and keeping an absent ingest's messages however many (max_queued_messages 0).
mqtt_port=$(free_port)
cat > "$work/mosquitto.conf" <<CONF
listener $mqtt_port 127.0.0.1
allow_anonymous true
persistence true
persistence_location $work/
max_queued_messages 0
max_inflight_messages 1000
user $(id -un)
CONF
setsid mosquitto -c "$work/mosquitto.conf" > "$work/mosquitto.log" 2>&1 &
pids+=($!)
disown
wait_for_port "$mqtt_port"

# The database: a cluster of its own, PostGIS installed (fleet-ingest --prepare, as its owner, makes the extension and
# the table).
pg_port=$(free_port)
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
pg_ctl=$bin/pg_ctl
as_postgres=""
if [ "$(id -u)" -eq 0 ]; then as_postgres="setpriv --reuid=postgres --regid=postgres --init-groups --"; fi
mkdir "$work/db"
[ -z "$as_postgres" ] || chown postgres: "$work/db"
$as_postgres "$bin/initdb" -D "$work/db" -A trust -U postgres --no-sync > "$work/initdb.log"
$as_postgres "$pg_ctl" -D "$work/db" -l "$work/db/postgres.log" -w \
    -o "-p $pg_port -c listen_addresses=127.0.0.1 -k $work/db" start > /dev/null
database=postgresql://postgres@127.0.0.1:$pg_port/postgres

"$FLEET_BIN/fleet-ingest" --prepare --database "$database" > "$work/prepare.log" 2>&1 \
    || { cat "$work/prepare.log" >&2; exit 1; }
setsid "$FLEET_BIN/fleet-ingest" --broker "mqtt://127.0.0.1:$mqtt_port" --database "$database" \
    > "$work/ingest.log" 2>&1 &
pids+=($!)
disown
# Once it has subscribed, the broker keeps every fix for it (its session), even while it is away.
for _ in $(seq 600); do grep -q "subscribed to" "$work/ingest.log" && break; sleep 0.1; done
grep -q "subscribed to" "$work/ingest.log" || { cat "$work/ingest.log" >&2; exit 1; }
"$FLEET_BIN/fleet-uplink" --vehicle demo-1 --broker "mqtt://127.0.0.1:$mqtt_port" --replay "$recording" --speed 0 \
    --queue "$work/queue" > "$work/uplink.log" 2>&1
sent=$(grep -o 'recording ended: [0-9]*' "$work/uplink.log" | grep -o '[0-9]*$')
echo "fleet-uplink sent $sent fixes of vehicle demo-1"

psql() { command psql -XAt -h 127.0.0.1 -p "$pg_port" -U postgres -d postgres "$@"; }
for _ in $(seq 600); do
    [ "$(psql -c "SELECT count(*) FROM fixes WHERE vehicle = 'demo-1'" 2>/dev/null || echo 0)" = "$sent" ] && break
    sleep 0.1
done
echo "fleet-ingest stored $(psql -c "SELECT count(*) FROM fixes WHERE vehicle = 'demo-1'") of them"

echo
echo "One vehicle's track over a time range (the README's first query), its first five points:"
psql -F ' ' -c "
SELECT seq, time, ST_Y(position::geometry) AS latitude, ST_X(position::geometry) AS longitude, speed
FROM fixes
WHERE vehicle = 'demo-1' AND time BETWEEN '2025-06-01 12:00:00+00' AND '2025-06-01 12:01:00+00'
ORDER BY time
LIMIT 5"

echo
echo "Every vehicle whose newest fix lies within a box (the README's second query):"
psql -F ' ' -c "
SELECT vehicle, seq, time, ST_Y(position::geometry) AS latitude, ST_X(position::geometry) AS longitude
FROM (SELECT DISTINCT ON (vehicle) * FROM fixes ORDER BY vehicle, time DESC) AS newest
WHERE ST_Intersects(position, ST_MakeEnvelope(13.40, 52.51, 13.43, 52.53, 4326)::geography)
ORDER BY vehicle"
