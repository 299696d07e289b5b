"""verbs_table.py: tests/bench/verbs.sh's table: Debian's ib_write_bw /
ib_write_lat on xroce (`xroce run`) beside `xroce perf` on the same path,
medians of interleaved runs, as a Markdown table.

  verbs_table.py SIZE DEPTH PLANES "NB.." "VB.." "NL.." "VL.."

NB/VB: bandwidth of each run, Gbit/s (native, verbs); NL/VL: each run's
round trip "median p99" pairs, us, flattened."""
import statistics as st
import sys


def main(argv):
    if len(argv) != 7:
        print(__doc__, file=sys.stderr)
        return 2
    size, depth, planes = argv[0:3]
    nb = [float(x) for x in argv[3].split()]
    vb = [float(x) for x in argv[4].split()]
    nl, nlp = ([float(x) for x in argv[5].split()[k::2]] for k in (0, 1))
    vl, vlp = ([float(x) for x in argv[6].split()[k::2]] for k in (0, 1))
    m = st.median
    print(f"ibverbs on xroce vs xroce perf, {planes} plane(s), "
          f"{len(nb)} interleaved runs (medians)")
    print("| metric | xroce perf | ib_write_* on xroce | verbs vs native |")
    print("|---|---|---|---|")
    print(f"| WRITE bandwidth, {size} B, {depth} in flight (Gbit/s) | {m(nb):.2f} | "
          f"{m(vb):.2f} | {m(vb) / m(nb):.2f}x |")
    print(f"| 8 B round trip, median (us) | {m(nl):.1f} | {m(vl):.1f} | "
          f"{m(vl) - m(nl):+.1f} us |")
    print(f"| 8 B round trip, p99 (us) | {m(nlp):.1f} | {m(vlp):.1f} | "
          f"{m(vlp) - m(nlp):+.1f} us |")
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
