# Two commands for a fresh machine (python3, gcc, make): `make demo` and `make test`.
# Both create/refresh .venv idempotently: pip only re-runs when pyproject.toml changes.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test venv bench clean

venv: $(STAMP)

$(STAMP): pyproject.toml
	# Debian's python3 needs python3-venv for `-m venv`; install it when we can (root, apt).
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV) || \
	  { rm -rf $(VENV); command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ] && \
	    apt-get install -y -q python3-venv && $(PYTHON) -m venv $(VENV); }
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/kcgen demo

test: $(STAMP)
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python bench/isadl_parse.py

clean:
	rm -rf $(VENV) build *.egg-info
