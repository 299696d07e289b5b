"""perftest_line.py: one result line of a perftest benchmark (the line
after its "#bytes" column headers), checked or turned into a figure, for
tests/integration/test_ibverbs.sh and tests/bench/verbs.sh.

  perftest_line.py check TOOL LINE   exit 1 unless the line is plausible:
                                     iterations > 0 and a positive figure
  perftest_line.py bw LINE           ib_*_bw: the average, Gbit/s
  perftest_line.py lat LINE          ib_*_lat: round trip median and p99,
                                     us (perftest prints half round trips)

Columns: bw  "#bytes #iterations BW_peak BW_average MsgRate" (MB/s of
2^20 bytes); lat "#bytes #iterations t_min t_max t_typical t_avg t_stdev
99% 99.9%" (us)."""
import sys


def fields(line):
    f = line.split()
    if len(f) < 5:
        raise SystemExit(f"perftest_line: not a result line: {line!r}")
    return f


def main(argv):
    if len(argv) == 3 and argv[0] == 'check':
        f = fields(argv[2])
        v = float(f[3])  # BW average (MB/s), or t_max (us) for latency
        if int(f[1]) <= 0 or v <= 0:
            print(f"perftest_line: {argv[1]}: implausible: {argv[2]!r}", file=sys.stderr)
            return 1
        return 0
    if len(argv) == 2 and argv[0] == 'bw':
        print("%.3f" % (float(fields(argv[1])[3]) * 8 * 1048576 / 1e9))
        return 0
    if len(argv) == 2 and argv[0] == 'lat':
        f = fields(argv[1])
        if len(f) < 8:
            raise SystemExit(f"perftest_line: no percentiles: {argv[1]!r}")
        print("%.2f %.2f" % (2 * float(f[4]), 2 * float(f[7])))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
