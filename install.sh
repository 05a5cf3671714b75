#!/bin/sh
# Installs the sqz binary for this machine: curl -fsSL <release URL>/install.sh | sh
#
# Downloads the release asset for this OS and architecture and its .sha256, checks the
# checksum (nothing is installed on a mismatch), and puts `sqz` in SQZ_INSTALL_DIR (default
# ~/.local/bin) without sudo. Running it again installs the same way; `--uninstall` removes it.
#
#   SQZ_DOWNLOAD_URL  where the assets are (default: the latest GitHub release)
#   SQZ_INSTALL_DIR   where sqz goes (default: ~/.local/bin)
set -eu

DOWNLOAD_URL="${SQZ_DOWNLOAD_URL:-https://github.com/sqz-dev/sqz/releases/latest/download}"
INSTALL_DIR="${SQZ_INSTALL_DIR:-${HOME:?HOME is not set}/.local/bin}"

say() { printf 'sqz install: %s\n' "$*"; }
fail() { printf 'sqz install: %s\n' "$*" >&2; exit 1; }

if [ "${1:-}" = "--uninstall" ]; then
    if [ -e "$INSTALL_DIR/sqz" ]; then
        rm -f "$INSTALL_DIR/sqz" "$INSTALL_DIR/sqz-mcp"
        say "removed $INSTALL_DIR/sqz (run 'sqz uninstall' first to remove its hooks from your agents)"
    else
        say "no sqz in $INSTALL_DIR; nothing to remove"
    fi
    exit 0
fi
if [ "$#" -gt 0 ]; then
    fail "unknown argument '$1' (the only one is --uninstall)"
fi

os=$(uname -s)
arch=$(uname -m)
case "$arch" in
    x86_64 | amd64) arch=x86_64 ;;
    aarch64 | arm64) arch=aarch64 ;;
    *) fail "no sqz build for the $arch architecture (x86_64 and aarch64 only)" ;;
esac
case "$os" in
    Linux) target="$arch-unknown-linux-musl" ;;
    Darwin) target="$arch-apple-darwin" ;;
    *) fail "no sqz build for $os (Linux and macOS only)" ;;
esac
asset="sqz-$target"

fetch() { # URL FILE
    if command -v curl >/dev/null 2>&1; then
        curl -fsSL --retry 2 -o "$2" "$1"
    elif command -v wget >/dev/null 2>&1; then
        wget -q -O "$2" "$1"
    else
        fail "neither curl nor wget is installed"
    fi
}

sha256_of() { # FILE
    if command -v sha256sum >/dev/null 2>&1; then
        sha256sum "$1" | cut -d ' ' -f 1
    elif command -v shasum >/dev/null 2>&1; then
        shasum -a 256 "$1" | cut -d ' ' -f 1
    else
        fail "neither sha256sum nor shasum is installed, so the download cannot be checked"
    fi
}

work=$(mktemp -d 2>/dev/null || mktemp -d -t sqz)
trap 'rm -rf "$work"' EXIT INT TERM

say "downloading $asset"
fetch "$DOWNLOAD_URL/$asset" "$work/$asset" || fail "cannot download $DOWNLOAD_URL/$asset"
fetch "$DOWNLOAD_URL/$asset.sha256" "$work/$asset.sha256" ||
    fail "cannot download $DOWNLOAD_URL/$asset.sha256"
want=$(cut -d ' ' -f 1 <"$work/$asset.sha256")
got=$(sha256_of "$work/$asset")
if [ -z "$want" ] || [ "$want" != "$got" ]; then
    fail "checksum mismatch for $asset (expected $want, got $got); nothing was installed"
fi

mkdir -p "$INSTALL_DIR"
chmod 755 "$work/$asset"
# Moved into place whole, so a running sqz is never half-overwritten.
cp "$work/$asset" "$INSTALL_DIR/.sqz.new"
mv -f "$INSTALL_DIR/.sqz.new" "$INSTALL_DIR/sqz"
ln -sf sqz "$INSTALL_DIR/sqz-mcp"
say "installed $("$INSTALL_DIR/sqz" --version) in $INSTALL_DIR"

case ":${PATH:-}:" in
    *":$INSTALL_DIR:"*) say "$INSTALL_DIR is on your PATH" ;;
    *) say "$INSTALL_DIR is not on your PATH; add it, e.g. export PATH=\"$INSTALL_DIR:\$PATH\"" ;;
esac
say "next: run 'sqz init' to set up your agents"
