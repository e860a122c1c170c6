# Set-up is part of every target: a fresh machine needs nothing but python3.11.
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# the gRPC stubs, generated from the proto at install time (see trajsearch/service/protos.py)
STUBS := trajsearch/service/_gen/STAMP

.PHONY: install demo test clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	# torch first, pinned: pip then takes the CPU wheel on disk instead of a multi-GB CUDA build
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e ".[test]"
	touch $(STAMP)

$(STUBS): schemas/trajsearch.proto $(STAMP)
	$(BIN)/python -m trajsearch.service.protos

install: $(STAMP) $(STUBS)

demo: install
	$(BIN)/trajsearch demo

test: install
	$(BIN)/python -m pytest -q

clean:
	rm -rf .trajsearch
