"""fabenv.py: the description `tests/fabric/fabric.sh up --env FILE`
writes (bash assignments, values quoted with printf %q), as a dict, for
Python that drives a fabric.

  fabenv.py FILE      the same as JSON"""
import json
import shlex
import sys


def load(path):
    env = {}
    for l in open(path):
        k, _, v = l.rstrip('\n').partition('=')
        env[k] = ' '.join(shlex.split(v)) if v else ''
    return env


if __name__ == '__main__':
    print(json.dumps(load(sys.argv[1])))
