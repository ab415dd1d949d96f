# Two commands for a fresh machine (python3, gcc, make): `make demo` and `make test`.
# Both create/refresh .venv idempotently: pip only re-runs when pyproject.toml changes.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test venv bench clean oracles toolchain

venv: $(STAMP)

$(STAMP): pyproject.toml
	# Debian's python3 needs python3-venv for `-m venv`; install it when we can (root, apt).
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV) || \
	  { rm -rf $(VENV); command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ] && \
	    apt-get install -y -q python3-venv && $(PYTHON) -m venv $(VENV); }
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP) toolchain
	$(BIN)/kcgen demo

test: $(STAMP) toolchain oracles
	$(BIN)/python -m pytest

# The simulators are generated C compiled by gcc (kcgen build). Install it when missing and we can.
toolchain:
	@if command -v gcc >/dev/null 2>&1; then :; \
	elif command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	  echo "installing gcc (kcgen build compiles the generated simulators)"; \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends gcc libc6-dev || \
	  { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends gcc libc6-dev; }; \
	else \
	  echo "error: gcc not found; install it (apt-get install gcc) to build simulators" >&2; exit 1; \
	fi

# External oracles for the assembler tests (tests/asm/test_gnu_oracle.py): GNU binutils for RISC-V.
# Installed only when missing, and only as root with apt-get; otherwise those tests skip.
oracles:
	@if command -v riscv64-unknown-elf-as >/dev/null 2>&1; then :; \
	elif command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	  echo "installing binutils-riscv64-unknown-elf (GNU as oracle for tests/asm)"; \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends binutils-riscv64-unknown-elf || \
	  { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
	      binutils-riscv64-unknown-elf; } || echo "notice: could not install binutils-riscv64-unknown-elf; GNU oracle tests will skip"; \
	else \
	  echo "notice: riscv64-unknown-elf-as not found; GNU oracle tests will skip" \
	       "(install: apt-get install binutils-riscv64-unknown-elf)"; \
	fi

bench: $(STAMP)
	$(BIN)/python bench/isadl_parse.py
	$(BIN)/python bench/asm_speed.py
	$(BIN)/python bench/sim_speed.py

clean:
	rm -rf $(VENV) build *.egg-info
