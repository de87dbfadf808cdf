"""The blockpipe command line.

    python -m blockpipe compile FILE.py [--program NAME] -o DIR [--target T] [--dump-passes]
    python -m blockpipe run FILE.py [--program NAME]
    python -m blockpipe trace-plot TRACE.json -o PICTURE.png [--program NAME] [--call N]
                                   [--from US] [--to US]
    python -m blockpipe trace-merge TRACE.json... -o MERGED.json
    python -m blockpipe launch -n P [--hostfile F] PROG.py [ARGS...]
    python -m blockpipe pypto SCRIPT.py [ARGS...]
    python -m blockpipe pypto-test FILE.py... [-k EXPR]

`compile` writes the generated project of one @pl.program of FILE.py to DIR
and builds it, for a bundled target (cpu-sim, the default, or cuda). `run` loads FILE.py and calls its `main()` (as examples have);
a file without one is an error. `trace-plot` draws the pipeline schedule a
trace recorded (BLOCKPIPE_TRACE) as one row per device, of one program, call
or window of time if asked, and prints each call's time and each device's
bubble and fill: within its calls (not between them), the share it idled,
and the share it waited for the first microbatch to reach it (the pipeline's
warm-up, not bubble). `trace-merge` joins
the parts the ranks of an MPI job wrote (`trace.rank<r>.json`; given
`trace.json`, its rank parts) into one timeline with a lane per rank and
device. `launch` runs PROG.py on P ranks with mpirun (see
blockpipe.distributed). `pypto` runs a pypto script unmodified and
`pypto-test` pypto's test files (see blockpipe.pypto): one line per case
(ok / FAIL / SKIP and why), a count, exit status 1 on a FAIL.
"""

from __future__ import annotations

import argparse
import pathlib
import runpy
import shutil
import sys

from blockpipe.errors import BuildError, CompileError


def _load_programs(path: pathlib.Path):
    from blockpipe.language.program import Program

    namespace = runpy.run_path(str(path), run_name="__blockpipe__")
    return {
        name: value for name, value in namespace.items() if isinstance(value, Program)
    }, namespace


def _pick(programs, wanted, path):
    if wanted:
        if wanted not in programs:
            raise SystemExit(
                f"error: {path} has no @pl.program named '{wanted}' "
                f"(it has: {', '.join(programs) or 'none'})"
            )
        return programs[wanted]
    if len(programs) != 1:
        raise SystemExit(
            f"error: {path} has {len(programs)} programs "
            f"({', '.join(programs) or 'none'}); choose one with --program"
        )
    return next(iter(programs.values()))


def ops_markdown() -> str:
    """The op table (BPOpTable.td) as a Markdown table: every spelling of
    each op, its class, the dtypes it takes and what it computes."""
    from blockpipe.language import op_table

    lines = [
        "| Operation | Class | Dtypes | Computes | NumPy |",
        "| --- | --- | --- | --- | --- |",
    ]
    for record in op_table.RECORDS.values():
        names = ", ".join(
            f"`pl.{record['pl_name']}`" if where == "pl" else f"`pl.{where}.{record['pl_name']}`"
            for where in record["spellings"].split()
        )
        numpy = record["numpy"].replace("|", "\\|")
        summary = record["summary"].replace("|", "\\|")
        lines.append(
            f"| {names} | {record['class']} | {record['dtypes']} | {summary} | `{numpy}` |"
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m blockpipe", description=__doc__.split("\n\n")[0]
    )
    sub = parser.add_subparsers(dest="command", required=True)
    comp = sub.add_parser("compile", help="compile a program to a C++ project and build it")
    comp.add_argument("file", type=pathlib.Path)
    comp.add_argument("--program", help="the @pl.program class to compile (when FILE has several)")
    comp.add_argument("-o", "--output", type=pathlib.Path, required=True, help="output directory")
    comp.add_argument(
        "--target", default="cpu-sim", help="the bundled device spec to compile for (cpu-sim, cuda)"
    )
    comp.add_argument(
        "--device",
        help="the device kind to build for: the target's own (default), or cuda-emu for cuda",
    )
    comp.add_argument(
        "--dump-passes", action="store_true", help="also write the IR after each pass"
    )
    run = sub.add_parser("run", help="call the main() function of FILE.py")
    run.add_argument("file", type=pathlib.Path)
    run.add_argument("--program", help="only check that this program exists in FILE")
    plot = sub.add_parser("trace-plot", help="draw a trace's pipeline schedule per device")
    plot.add_argument("file", type=pathlib.Path)
    plot.add_argument(
        "-o", "--output", type=pathlib.Path, required=True, help="the picture (.png, .svg or .pdf)"
    )
    plot.add_argument("--program", help="only this program's devices (its class name)")
    plot.add_argument(
        "--call", type=int, metavar="N", help="only the N-th call of the program (from 1)"
    )
    plot.add_argument(
        "--from",
        dest="start",
        type=float,
        metavar="US",
        help="only what ran after this time (microseconds, the trace's unit)",
    )
    plot.add_argument(
        "--to", dest="end", type=float, metavar="US", help="only what ran before this time"
    )
    merge = sub.add_parser("trace-merge", help="join the trace parts of an MPI job's ranks")
    merge.add_argument(
        "files",
        nargs="+",
        type=pathlib.Path,
        help="trace.rank<r>.json parts, or the BLOCKPIPE_TRACE path they came from",
    )
    merge.add_argument("-o", "--output", type=pathlib.Path, required=True, help="the merged trace")
    launch = sub.add_parser("launch", help="run a script on P ranks with mpirun")
    launch.add_argument("-n", "--processes", type=int, required=True, help="ranks to run")
    launch.add_argument("--hostfile", help="OpenMPI hostfile: the hosts and their slots")
    launch.add_argument("program", help="the script every rank runs")
    launch.add_argument("program_args", nargs=argparse.REMAINDER, help="its arguments")
    script = sub.add_parser("pypto", help="run a pypto script unmodified on blockpipe")
    script.add_argument("script", help="the pypto script, run as __main__")
    script.add_argument("script_args", nargs=argparse.REMAINDER, help="its arguments")
    script.add_argument("--target", default="cpu-sim", help="the target to run on")
    tests = sub.add_parser("pypto-test", help="run pypto test files unmodified on blockpipe")
    tests.add_argument("files", nargs="+", help="pypto test files (test_*.py)")
    tests.add_argument(
        "-k", dest="keyword", help="only the cases this pytest -k expression selects"
    )
    tests.add_argument("--target", default="cpu-sim", help="the target to run on")
    tests.add_argument("--tb", action="store_true", help="print each FAIL's traceback")
    tests.add_argument(
        "--reasons", action="store_true", help="end with the SKIP and FAIL reasons, by cases"
    )
    sub.add_parser(
        "ops",
        help="list the op table's operations: names, class, dtypes, what each computes",
    )
    args = parser.parse_args(argv)

    if args.command == "ops":
        print(ops_markdown())
        return 0

    if args.command in ("pypto", "pypto-test"):
        from blockpipe.pypto import cli

        if args.command == "pypto":
            return cli.run_script(args.script, args.script_args, args.target)
        return cli.run_tests(args.files, args.keyword, args.target, args.tb, args.reasons)

    if args.command == "launch":
        from blockpipe import distributed

        try:
            return distributed.launch(
                args.processes, [args.program, *args.program_args], hostfile=args.hostfile
            )
        except (ValueError, FileNotFoundError) as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
    if args.command == "trace-merge":
        import json

        from blockpipe import trace

        parts = []
        for path in args.files:
            expanded = trace.rank_parts(str(path)) if not path.is_file() else [str(path)]
            if not expanded:
                print(
                    f"error: {path}: no such file, and no {path.stem}.rank<r>{path.suffix} "
                    "parts beside it",
                    file=sys.stderr,
                )
                return 2
            parts += expanded
        try:
            merged = trace.merge(parts)
        except (OSError, ValueError) as err:
            print(f"error: {err}", file=sys.stderr)
            return 1
        args.output.write_text(json.dumps(merged))
        print(
            f"merged {len(parts)} parts (ranks {', '.join(map(str, merged['otherData']['ranks']))}) "
            f"into {args.output}"
        )
        return 0
    if not args.file.is_file():
        print(f"error: {args.file}: no such file", file=sys.stderr)
        return 2
    if args.command == "trace-plot":
        from blockpipe import traceplot

        selection = dict(program=args.program, call=args.call, start=args.start, end=args.end)
        try:
            measured = traceplot.plot(str(args.file), str(args.output), **selection)
            lines = traceplot.summary(str(args.file), measured, **selection)
        except (ValueError, KeyError) as err:
            print(f"error: {args.file}: {err}", file=sys.stderr)
            return 1
        print("\n".join(lines))
        print(f"wrote {args.output}")
        return 0
    try:
        if args.command == "compile":
            import blockpipe

            programs, _ = _load_programs(args.file)
            program = _pick(programs, args.program, args.file)
            try:
                compiled = blockpipe.compile(
                    program,
                    output_dir=args.output,
                    target=args.target,
                    dump_passes=args.dump_passes,
                    device=args.device,
                )
            except ValueError as err:  # an unknown target or device
                print(f"error: {err}", file=sys.stderr)
                return 2
            # The directory is then all bp-run needs: kernel_config.json and
            # the library it names.
            library = pathlib.Path(compiled.output_dir) / compiled.library_path.name
            shutil.copy2(compiled.library_path, library)
            print(
                f"{program.name}: {len(compiled.artifacts)} files in {compiled.output_dir}; "
                f"library {library}"
            )
            return 0
        programs, namespace = _load_programs(args.file)
        if args.program:
            _pick(programs, args.program, args.file)
        entry = namespace.get("main")
        if not callable(entry):
            print(
                f"error: {args.file} has no main() function to run "
                f"(define one, or run the file with python)",
                file=sys.stderr,
            )
            return 2
        result = entry()
        return int(result) if isinstance(result, int) else 0
    except CompileError as err:
        print(err, file=sys.stderr)
        return 1
    except BuildError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
