"""mpi_table.py: tests/bench/mpi.sh's table from its JSON lines (one per
transport, loss, operation and size, as xrmpi prints them plus transport,
loss, whether a spine link was failed during the job (link_down) and whether
the job succeeded).

  mpi_table.py RAW.jsonl NRANKS"""
import json
import sys


def main():
    rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
    by = {(r['transport'], r['loss'], r.get('link_down', 0), r['op'], r['bytes']): r
          for r in rows}
    keys = sorted({(r['loss'], r.get('link_down', 0), r['op'], r['bytes']) for r in rows})
    print(f"{sys.argv[2]} ranks; bus bandwidth in Gbit/s (time per operation in us)\n")
    print("| loss | operation | bytes | xroce | TCP | xroce / TCP |")
    print("|---|---|---|---|---|---|")
    for loss, down, op, size in keys:
        x = by.get(('xroce', loss, down, op, size))
        t = by.get(('tcp', loss, down, op, size))

        def cell(r):
            return f"{r['busbw_gbps']:.3f} ({r['time_us']:.0f})" if r else "failed"
        ratio = (f"{x['busbw_gbps'] / t['busbw_gbps']:.2f}"
                 if x and t and t['busbw_gbps'] > 0 else "-")
        cond = f"{loss * 100:g}%" + (", link down" if down else "")
        print(f"| {cond} | {op} | {size} | {cell(x)} | {cell(t)} | {ratio} |")


if __name__ == '__main__':
    main()
