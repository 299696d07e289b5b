# shellcheck shell=bash
# xroce.sh: looking at xroce on a test's hosts; source it after
# tests/lib/netns.sh and tests/lib/check.sh.
#
#   xr_counter NS NAME        an xr_stats counter of NS's xroce program
#                             (on eth0)
#   xr_listening NS [PORT]    wait until a UDP socket in NS listens on PORT
#                             (default 4794, xroce's control port); status
#                             1 after 10 s (times XR_TIME_SCALE)
#   xr_wait_listen NS [PORT]  the same, failing the test after the 10 s
#   xr_wait_conn NS           until NS's xroce program holds a connection
#                             in state rts; fails after 10 s
#   xr_xdp_state NS           JSON {"stats", "entries": {map: count}} of
#                             NS's xroce program (tests/lib/xrtest/xdpstate.py)
#
# XROCE names the binary (default build/xroce).

XROCE=${XROCE:-$XR_ROOT/build/xroce}

xr_counter() {
	nsx "$1" "$XROCE" status eth0 --json | xr_json 'j["programs"][0]["stats"][a[0]]' "$2"
}

xr_listening() {
	local i
	for ((i = 0; i < 200 * ${XR_TIME_SCALE:-1}; i++)); do
		nsx "$1" ss -Hlun "sport = :${2:-4794}" | grep -q . && return 0
		sleep 0.05
	done
	return 1
}

xr_wait_listen() { xr_listening "$@" || fail "nobody listens on port ${2:-4794} in $1"; }

xr_wait_conn() {
	local i
	for ((i = 0; i < 200 * ${XR_TIME_SCALE:-1}; i++)); do
		nsx "$1" "$XROCE" status eth0 --json 2>/dev/null | xr_json \
			'any(c["state"] == "rts" for p in j["programs"] for c in p["connections"])' |
			grep -qx True && return 0
		sleep 0.05
	done
	fail "no connection came up in $1"
}

xr_xdp_state() { nsx "$1" python3 "$XR_PY/xdpstate.py" "$XROCE" eth0; }
