#!/bin/sh
# Stands in for tofu-opt in fuzz-ir-classify.test: behaves as the input asks.
input=$(cat)
case "$input" in
  *ABORT*) kill -ABRT $$ ;;
  *LLVM_ERROR*) echo "LLVM ERROR: out of memory" >&2; exit 1 ;;
  *EXIT2*) echo "error: something" >&2; exit 2 ;;
  *SILENT*) exit 1 ;;
  *DIAGNOSE*) echo "<stdin>:1:1: error: a diagnostic" >&2; exit 1 ;;
  *) exit 0 ;;
esac
