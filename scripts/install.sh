# Sourced by serve.sh and test.sh (from the repository root): make .venv and install this
# checkout into it, editable, with the given extras. It says what it installs and how big that
# is, then shows pip's own progress, instead of going quiet for minutes. It reinstalls only when
# the packaging inputs changed (pyproject.toml, setup.py, the top-level folders) or the import
# check fails, so later runs start at once.

mw_venv() {
    if [ ! -x .venv/bin/python ]; then
        echo "==> Creating .venv with ${PYTHON:-python3}"
        "${PYTHON:-python3}" -m venv .venv
    fi
}

# mw_install EXTRAS WHAT IMPORTS: install memorywiki[EXTRAS]; WHAT says how big/long it is;
# IMPORTS is a Python import line that must work afterwards.
mw_install() {
    local extras="$1" what="$2" imports="$3"
    local stamp=".venv/.memorywiki-installed-${extras//,/-}"
    local want
    # The top-level folders are what setup.py maps to packages; the folders an install itself
    # makes (memorywiki.egg-info/, build/, dist/) are left out, or the first install would
    # change the stamp and every later run would reinstall.
    want="$({ cat pyproject.toml setup.py; ls -d -- */ | grep -v -x -e '.*\.egg-info/' -e 'build/' -e 'dist/'; } \
        | sha256sum | cut -d' ' -f1)"
    if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && .venv/bin/python -c "$imports" 2>/dev/null; then
        return 0
    fi
    local start=$SECONDS
    echo "==> Installing memorywiki[$extras] into .venv ($what)"
    .venv/bin/python -m pip install -q --upgrade pip
    # setuptools prints an "Editable installation" notice about folders named like the package
    # on every editable install; the checkout has no memorywiki/ folder, so the notice is noise.
    PYTHONWARNINGS="ignore:Editable installation" \
        .venv/bin/python -m pip install --progress-bar on -e ".[$extras]"
    .venv/bin/python -c "$imports"
    echo "$want" > "$stamp"
    echo "==> Installed memorywiki[$extras] in $((SECONDS - start)) s"
}
