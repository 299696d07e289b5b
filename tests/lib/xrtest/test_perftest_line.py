"""The helpers of test_ibverbs.sh on lines perftest 4.5 printed."""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BW = " 65536      1000             645.03             147.59 \t\t   0.002361"
LAT = (" 2       200          10.72          2220.20      35.45    \t       "
       "125.35      \t393.45 \t\t2084.71 \t\t2220.20")


def run(*args):
    p = subprocess.run([sys.executable, os.path.join(HERE, args[0])] + list(args[1:]),
                       capture_output=True, text=True)
    return p.returncode, p.stdout.strip()


def main():
    assert run('perftest_line.py', 'check', 'ib_write_bw', BW) == (0, '')
    assert run('perftest_line.py', 'check', 'ib_write_lat', LAT) == (0, '')
    assert run('perftest_line.py', 'check', 'ib_write_bw', BW.replace('1000', '0', 1))[0] == 1
    assert run('perftest_line.py', 'check', 'ib_write_bw', BW.replace('147.59', '0.00'))[0] == 1
    assert run('perftest_line.py', 'bw', BW) == (0, '1.238'), run('perftest_line.py', 'bw', BW)
    assert run('perftest_line.py', 'lat', LAT) == (0, '70.90 4169.42')
    assert run('perftest_line.py', 'bw', 'garbage')[0] != 0
    mb = 1048576
    assert run('planes_carried.py', '0 0', f'{11 * mb} {12 * mb}', '10') == (0, '11 MB 12 MB')
    assert run('planes_carried.py', '0 0', f'{11 * mb} {5 * mb}', '10') == (1, '11 MB 5 MB')
    print("test_perftest_line: ok")


if __name__ == '__main__':
    main()
