#!/bin/sh
# Stands in for tofu-opt in fuzz-ir-classify.test: behaves as the input asks.
input=$(cat)
case "$input" in
  *ABORT*) kill -ABRT $$ ;;
  *LLVM_ERROR*) echo "LLVM ERROR: out of memory" >&2; exit 1 ;;
  *EXIT2*) echo "error: something" >&2; exit 2 ;;
  *SILENT*) exit 1 ;;
  *PARSER_CRASH*) printf 'Stack dump:\n1.\tMLIR Parser: custom op parser '"'"'linalg.batch_matmul'"'"'\n' >&2; kill -SEGV $$ ;;
  *PASS_CRASH*) printf 'Stack dump:\n1.\tMLIR Parser: custom op parser '"'"'func.func'"'"'\n2.\tRunning pass '"'"'TofuAutodiff'"'"'\n' >&2; kill -SEGV $$ ;;
  *DIAGNOSE*) echo "<stdin>:1:1: error: a diagnostic" >&2; exit 1 ;;
  *) exit 0 ;;
esac
