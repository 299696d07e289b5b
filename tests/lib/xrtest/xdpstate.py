"""xdpstate.py: what the xroce program on an interface holds, as the tests
compare it before and after a run: its counters and how many entries its
maps hold (the maps found through the program, as bpftool sees them:
xr_rq and xr_reads are not in `xroce status`).  Run it in the interface's
network namespace.

  xdpstate.py XROCE IFACE           JSON {"stats": {...}, "entries":
                                    {map name: count}}
  xdpstate.py --counts XROCE IFACE  one line "domains mrs conns rq reads"
                                    ("error" if there is no program)"""
import json
import subprocess
import sys

MAPS = ('xr_rq', 'xr_reads', 'xr_conns', 'xr_mrs', 'xr_domains', 'xr_txq')


def bpftool(*args):
    return json.loads(subprocess.check_output(['bpftool', '-j', *args]))


def entries(prog_id):
    """{map name: entries} of the program's maps named in MAPS."""
    n = {}
    for mid in bpftool('prog', 'show', 'id', str(prog_id)).get('map_ids', []):
        name = bpftool('map', 'show', 'id', str(mid)).get('name', '')
        if name in MAPS:
            n[name] = len(bpftool('map', 'dump', 'id', str(mid)))
    return n


def main(argv):
    counts = argv[:1] == ['--counts']
    xroce, iface = argv[1:] if counts else argv
    try:
        st = json.loads(subprocess.check_output([xroce, 'status', iface, '--json'],
                                                stderr=subprocess.DEVNULL))['programs'][0]
    except (subprocess.CalledProcessError, ValueError, IndexError, KeyError):
        if counts:
            print('error')
            return
        raise
    e = entries(st['prog_id'])
    if counts:
        print(st['domains'], st['mrs'], len(st['connections']), e.get('xr_rq', 0),
              e.get('xr_reads', 0))
    else:
        print(json.dumps({'stats': st['stats'], 'entries': e}))


main(sys.argv[1:])
