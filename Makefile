# Two commands do all set-up: `make demo` and `make test` (see README.md).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test bench docs system-deps browser

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

system-deps:
	@command -v dot >/dev/null 2>&1 || bash .ci/install-graphviz

# Headless Chromium and ChromeDriver: the tests open the HTML view in a real browser.
browser:
	@command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1 || bash .ci/install-chromium

demo: $(BIN)/python system-deps
	$(BIN)/python -m pip install --quiet -e ".[demo]"
	$(BIN)/nodeweave demo

test: $(BIN)/python system-deps browser
	$(BIN)/python -m pip install --quiet -e ".[test]"
	NODEWEAVE_NUM_THREADS=1 $(BIN)/python -m pytest -n 2 --dist loadfile --durations=25

# The API reference, rendered by pdoc from the docstrings (tests/docs builds the same modules in CI).
API_MODULES := engine engine.training.trainer engine.training.callbacks engine.training.losses engine.training.metrics engine.training.optimizers layers graph
docs: $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[docs]"
	rm -rf docs/api
	$(BIN)/python -m pdoc --docformat google --output-directory docs/api $(API_MODULES)

bench: $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[bench]"
	$(BIN)/python -m benchmarks
