"""`kcgen`: the KernelCraft command line."""
from __future__ import annotations

import sys
from pathlib import Path

import click

import isadl
from isadl import canonical

REPO = Path(__file__).resolve().parent.parent


def parse_defines(values: tuple[str, ...]) -> dict[str, int]:
    out = {}
    for item in values:
        name, sep, value = item.partition("=")
        if not sep or not name.isidentifier():
            raise click.UsageError(f"-D {item}: expected NAME=VALUE")
        try:
            out[name] = int(value.replace("_", ""), 0)
        except ValueError:
            raise click.UsageError(f"-D {item}: value must be an integer") from None
    return out


def _report(exc: isadl.IsaError) -> None:
    click.echo(str(exc), err=True)
    n = len(exc.diagnostics)
    if n > 1:
        click.echo(f"{n} errors", err=True)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """KernelCraft: ISA descriptions → assembler, simulator, docs; agent kernel benchmark."""


@main.command("check")
@click.argument("files", nargs=-1, required=True)
@click.option("-D", "defines", multiple=True, metavar="NAME=VALUE", help="Override a parameter.")
def check_cmd(files: tuple[str, ...], defines: tuple[str, ...]) -> None:
    """Check ISA descriptions; print a one-line summary per isa (exit 1 on any error)."""
    d = parse_defines(defines)
    failed = False
    for f in files:
        try:
            for spec in isadl.load_all(f, d):
                click.echo(f"{isadl.find_target(f)}: {spec.summary()}")
        except isadl.IsaError as exc:
            _report(exc)
            failed = True
    sys.exit(1 if failed else 0)


@main.command("ir")
@click.argument("file")
@click.option("-D", "defines", multiple=True, metavar="NAME=VALUE", help="Override a parameter.")
@click.option("--isa", "isa_name", default=None, help="Which isa block of the file (default: the last).")
@click.option("--hash", "show_hash", is_flag=True, help="Print only the content hash.")
def ir_cmd(file: str, defines: tuple[str, ...], isa_name: str | None, show_hash: bool) -> None:
    """Print the canonical JSON IR of an ISA."""
    try:
        spec = isadl.load(file, parse_defines(defines), isa_name)
    except isadl.IsaError as exc:
        _report(exc)
        sys.exit(1)
    click.echo(canonical.content_hash(spec) if show_hash else canonical.dumps(spec))


@main.command("demo")
def demo_cmd() -> None:
    """The offline showcase: check every target and language fixture, print their summaries."""
    files = sorted((REPO / "targets").glob("*.isa")) + sorted((REPO / "tests" / "isadl" / "fixtures").glob("*.isa"))
    failed = False
    click.echo(f"Checking {len(files)} ISA descriptions")
    for f in files:
        try:
            for spec in isadl.load_all(f):
                click.echo(f"  {f.relative_to(REPO)}: {spec.summary()}  [{canonical.content_hash(spec)[:12]}]")
        except isadl.IsaError as exc:
            _report(exc)
            failed = True
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
