#!/usr/bin/env bash
# Install the pinned coding tools (scripts/agent-tools.env) for the end-to-end tests:
# Claude Code and Codex CLI from npm, Aider from PyPI in its own venv (its pinned
# dependencies must not touch the project's .venv). Nothing is installed globally.
#
#   scripts/install-agent-tools.sh [PREFIX]
#
# PREFIX defaults to $MEMORYWIKI_AGENT_TOOLS, else .agent-tools in the repo (git-ignored).
# A tool already at its pinned version is left alone, so a re-run is quick. Exits non-zero
# naming the tool that could not be installed.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=agent-tools.env
. scripts/agent-tools.env
PREFIX="${1:-${MEMORYWIKI_AGENT_TOOLS:-$PWD/.agent-tools}}"
PYTHON="${PYTHON:-python3}"
mkdir -p "$PREFIX"
PREFIX="$(cd "$PREFIX" && pwd)"
failed=()

version_of() {  # prints the tool's version output, or nothing
    [ -x "$1" ] && timeout 60 "$1" --version 2>/dev/null | head -n 1 || true
}

npm_tools() {  # Claude Code and Codex, in one npm install (a second one would prune the first)
    local claude="$PREFIX/npm/node_modules/.bin/claude" codex="$PREFIX/npm/node_modules/.bin/codex"
    if version_of "$claude" | grep -qF "$CLAUDE_CODE_VERSION" && version_of "$codex" | grep -qF "$CODEX_VERSION"; then
        echo "claude $CLAUDE_CODE_VERSION, codex $CODEX_VERSION: already installed"
        return
    fi
    if ! command -v npm >/dev/null 2>&1; then
        echo "claude, codex: npm is not installed (Node.js and npm are needed)" >&2
        failed+=(claude codex)
        return
    fi
    echo "npm install @anthropic-ai/claude-code@$CLAUDE_CODE_VERSION @openai/codex@$CODEX_VERSION"
    # --engine-strict off: Claude Code 2.1.332 declares node >= 22 but ships a native
    # binary that runs on any node (pinning the version keeps npm from picking an older one).
    npm install --prefix "$PREFIX/npm" --no-fund --no-audit --loglevel=error --engine-strict=false \
        "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" "@openai/codex@$CODEX_VERSION" || true
    version_of "$claude" | grep -qF "$CLAUDE_CODE_VERSION" || { echo "claude: npm install failed" >&2; failed+=(claude); }
    version_of "$codex" | grep -qF "$CODEX_VERSION" || { echo "codex: npm install failed" >&2; failed+=(codex); }
}

aider_tool() {
    local bin="$PREFIX/aider/bin/aider"
    if version_of "$bin" | grep -qF "$AIDER_VERSION"; then
        echo "aider $AIDER_VERSION: already installed"
        return
    fi
    echo "aider $AIDER_VERSION: pip install aider-chat==$AIDER_VERSION (its own venv)"
    if "$PYTHON" -m venv "$PREFIX/aider" \
        && "$PREFIX/aider/bin/pip" install -q --disable-pip-version-check "aider-chat==$AIDER_VERSION" \
        && version_of "$bin" | grep -qF "$AIDER_VERSION"; then
        return
    fi
    echo "aider $AIDER_VERSION: pip install of aider-chat==$AIDER_VERSION failed" >&2
    failed+=("aider")
}

npm_tools
aider_tool

if [ "${#failed[@]}" -gt 0 ]; then
    echo "could not install: ${failed[*]} (the tests for them fail in CI and skip elsewhere)" >&2
    exit 1
fi
echo "agent tools in $PREFIX"
