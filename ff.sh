first_failure() {
  awk '
    /^==========+$/ { header = ""; in_header = 1; next }
    in_header { header = header $0 "\n"; if ($0 == "") in_header = 0; next }
    !done && /(ERROR|FATAL ERROR|TEST CASE FAILED|THREW exception)/ { printf "%s", header; printing = 1 }
    printing { print; if ($0 == "") { done = 1; printing = 0 } }
  ' "$1"
}
