"""planes_carried.py: did every plane carry data?  Transmit byte counters
of each interface before and after, space separated, in the same order.

  planes_carried.py "B0 B1 .." "A0 A1 .." MIN_MB

Prints what each plane carried; exit 1 if one carried MIN_MB or less."""
import sys


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    before = [int(x) for x in argv[0].split()]
    after = [int(x) for x in argv[1].split()]
    d = [y - x for x, y in zip(before, after)]
    print(" ".join(f"{x // 1048576} MB" for x in d))
    return 0 if d and min(d) > int(argv[2]) * 1048576 else 1


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
