# Set-up is part of every target: a fresh machine needs nothing but python3.11.
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# the gRPC stubs, generated from the proto at install time (see trajsearch/service/protos.py)
STUBS := trajsearch/service/_gen/STAMP

.PHONY: install browser demo test screenshots clean

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

# The browser tests drive Debian's chromium with its chromedriver. Installed here when missing and
# possible (root and apt-get); otherwise those tests say why and are skipped (except in CI, where
# .ci/run sets TRAJSEARCH_REQUIRE_BROWSER=1 and they fail instead).
browser:
	@if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing chromium and chromium-driver for the browser tests"; \
		apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium chromium-driver \
			|| echo "warning: could not install chromium/chromium-driver: the browser tests will be skipped"; \
	else \
		echo "note: chromium/chromium-driver are missing and need root + apt-get to install: the browser tests will be skipped"; \
	fi

# One worker per core, at most four (each holds the model and its stores), a test file's tests on one worker (its
# module-scoped stores are built once): the suite ran 27 minutes on one core of two.
test: install browser
	$(BIN)/python -m pytest -q -n auto --maxprocesses=4 --dist loadfile

screenshots: install browser
	$(BIN)/python scripts/screenshots.py

clean:
	rm -rf .trajsearch
