# `make demo`: set up .venv and run mcmc on a built-in default.
# `make test`: set up .venv and run the test suite.
# PYTHON=/path/to/python3.12 overrides the interpreter search (scripts/find-python).
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test bench clean

$(STAMP): pyproject.toml
	@py=$$(scripts/find-python) || exit 1; \
	  [ -x $(BIN)/python ] || { echo "creating $(VENV) with $$py" >&2; "$$py" -m venv $(VENV); }
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	@# An editable install leaves the sources uncompiled, and with PYTHONDONTWRITEBYTECODE
	@# (set on these machines) every run would compile them again: 20-30 ms per command.
	$(BIN)/python -m compileall -q cli core diagnostics
	@touch $@

demo: $(STAMP)
	$(BIN)/mcmc sample --target eight-schools --sampler hmc --target-accept 0.9 --chains 4 --seed 1 -o demo.npz
	$(BIN)/mcmc diagnose demo.npz
	$(BIN)/mcmc lda

test: $(STAMP)
	$(BIN)/python -m pytest -q

bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test,bench]'
	$(BIN)/python -m compileall -q cli core diagnostics
	$(BIN)/python bench/diagnose.py

clean:
	rm -rf $(VENV) demo.npz build *.egg-info
